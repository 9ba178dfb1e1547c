package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeysAPI: each slug of the org is a project of the sink with an id of
// its own, the same on every look-up; another org is 404, no token 401.
func TestKeysAPI(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("GET /api/0/projects/{org}/{slug}/keys/", newKeysAPI("my-org", "http", "127.0.0.1:9"))
	get := func(path, token string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, path, http.NoBody)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		var keys []struct {
			IsActive bool `json:"isActive"`
			DSN      struct {
				Public string `json:"public"`
			} `json:"dsn"`
		}
		if rec.Code != http.StatusOK {
			return rec.Code, ""
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &keys))
		require.Len(t, keys, 1)
		assert.True(t, keys[0].IsActive)
		return rec.Code, keys[0].DSN.Public
	}
	_, a := get("/api/0/projects/my-org/alpha/keys/", "t")
	_, b := get("/api/0/projects/my-org/beta/keys/", "t")
	_, again := get("/api/0/projects/my-org/alpha/keys/", "t")
	assert.Equal(t, "http://public@127.0.0.1:9/1001", a)
	assert.Equal(t, "http://public@127.0.0.1:9/1002", b)
	assert.Equal(t, a, again, "a slug keeps its project")
	code, _ := get("/api/0/projects/other-org/alpha/keys/", "t")
	assert.Equal(t, http.StatusNotFound, code)
	code, _ = get("/api/0/projects/my-org/alpha/keys/", "")
	assert.Equal(t, http.StatusUnauthorized, code)
}
