// Package catalog is the service's vocabulary: the domain types that the stores return
// and the route groups encode, apart from any adapter. Field tags are the API's names.
package catalog
