// Command oauth is the Lambda function of the oauth route group: wiring only, the
// group itself lives in the shared library.
package main

import (
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/oauth"
)

func main() { app.Main(oauth.Group) }
