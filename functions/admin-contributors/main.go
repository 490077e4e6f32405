// Command admin-contributors is the Lambda function of the admin-contributors route group: wiring only, the
// group itself lives in the shared library.
package main

import (
	"github.com/mediacatalog/service/shared/admincontributors"
	"github.com/mediacatalog/service/shared/app"
)

func main() { app.Main(admincontributors.Group) }
