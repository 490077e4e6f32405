// Command admin-permissions is the Lambda function of the admin-permissions route group: wiring only, the
// group itself lives in the shared library.
package main

import (
	"github.com/mediacatalog/service/shared/adminpermissions"
	"github.com/mediacatalog/service/shared/app"
)

func main() { app.Main(adminpermissions.Group) }
