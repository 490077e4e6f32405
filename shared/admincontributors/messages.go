package admincontributors

import "github.com/mediacatalog/service/shared/apperr"

// The group's messages, word for word as the OpenAPI document gives them.
const (
	msgAdded        = "Contributor added successfully"
	msgUpdated      = "Contributor updated successfully"
	msgDeleted      = "Contributor deleted successfully"
	msgAddFailed    = "An error occurred while adding the contributor"
	msgUpdateFailed = "An error occurred while updating the contributor"
	msgDeleteFailed = "An error occurred while deleting the contributor"
)

// failed gives an unexpected failure the route's own 500 message.
func failed(err error, msg string) error { return apperr.InternalAs(err, msg) }
