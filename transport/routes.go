package transport

import "github.com/creatormusic/platform/apikey"

// Services are the domain services the route table serves.
type Services struct {
	// Keys manages developer API keys.
	Keys *apikey.Service
	// Health observes the platform's services for /api/v1/health/services.
	Health []HealthCheck
}

// APIRoutes is the route table of the /api/v1 surface built so far. Routes
// of the spec that are not built yet are absent (404 ROUTE_NOT_FOUND),
// never stubs.
func APIRoutes(s Services) []Route {
	var rs []Route
	rs = append(rs, identityRoutes()...)
	rs = append(rs, keyRoutes(s.Keys)...)
	rs = append(rs, opsRoutes(s.Health)...)
	return rs
}
