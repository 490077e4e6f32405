// Command tags is the Lambda function of the tags route group: wiring only, the
// group itself lives in the shared library.
package main

import (
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/tags"
)

func main() { app.Main(tags.Group) }
