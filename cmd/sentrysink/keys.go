package main

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
)

// keysAPI plays the one call of Sentry's management API that discovery
// makes for a project that exists (routing::discovery, without
// auto_create_projects): GET /api/0/projects/{org}/{slug}/keys/, answered
// with one active key whose DSN is this sink. Every slug of the org is a
// project: the first slug asked gets project id firstKeysProject, the next
// one more, and a slug keeps its id. Any other org is 404, and a request
// without a bearer token 401, as Sentry answers them.
type keysAPI struct {
	org          string
	scheme, host string // the sink's, for the DSNs

	mu  sync.Mutex
	ids map[string]int
}

// firstKeysProject is the id of the first project keysAPI names.
const firstKeysProject = 1001

func newKeysAPI(org, scheme, host string) *keysAPI {
	return &keysAPI{org: org, scheme: scheme, host: host, ids: map[string]int{}}
}

func (k *keysAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") == "" {
		answer(w, http.StatusUnauthorized, map[string]string{"detail": "Authentication credentials were not provided."})
		return
	}
	if r.PathValue("org") != k.org {
		answer(w, http.StatusNotFound, map[string]string{"detail": "The requested resource does not exist"})
		return
	}
	slug := r.PathValue("slug")
	k.mu.Lock()
	id, ok := k.ids[slug]
	if !ok {
		id = firstKeysProject + len(k.ids)
		k.ids[slug] = id
	}
	k.mu.Unlock()
	dsn := fmt.Sprintf("%s://public@%s/%d", k.scheme, k.host, id)
	answer(w, http.StatusOK, []map[string]any{{
		"id": "k" + strconv.Itoa(id), "public": "public", "isActive": true, "projectId": id,
		"dsn": map[string]string{"public": dsn},
	}})
}
