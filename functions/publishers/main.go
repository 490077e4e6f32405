// Command publishers is the Lambda function of the publishers route group: wiring only, the
// group itself lives in the shared library.
package main

import (
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/publishers"
)

func main() { app.Main(publishers.Group) }
