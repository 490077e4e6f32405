// Command cdn is the Lambda function of the cdn route group: wiring only, the
// group itself lives in the shared library.
package main

import (
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/cdn"
)

func main() { app.Main(cdn.Group) }
