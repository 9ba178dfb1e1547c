package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/otel-sentry/sentryexporter/internal/profilechunk"
)

// checkProfileChunks checks the profile_chunk items of a parsed-valid raw
// envelope as Relay's profile chunk processing does
// (profilechunk.CheckRelay: sample format v2 parse and normalisation, the
// item header's profile type against the payload's, the size limit). It is
// stricter than Relay in one point, our writer's contract: the item header
// must carry `platform`, which Relay needs to pick the data category before
// parsing. Relay drops an invalid chunk with an `invalid` outcome; the sink
// rejects the envelope, so a test cannot miss it.
func checkProfileChunks(data []byte) error {
	_, off := nextLine(data, 0) // the envelope header
	var errs []error
	for n := 0; off < len(data); n++ {
		line, start := nextLine(data, off)
		if len(bytes.TrimSpace(line)) == 0 {
			break
		}
		var h struct {
			Type     string  `json:"type"`
			Length   *int    `json:"length"`
			Platform *string `json:"platform"`
		}
		if err := json.Unmarshal(line, &h); err != nil {
			return fmt.Errorf("item %d: header: %w", n, err)
		}
		end := len(data)
		if h.Length != nil {
			end = min(start+max(*h.Length, 0), len(data))
		} else if i := bytes.IndexByte(data[start:], '\n'); i >= 0 {
			end = start + i
		}
		if h.Type == "profile_chunk" {
			if err := checkProfileChunk(data[start:end], h.Platform); err != nil {
				errs = append(errs, fmt.Errorf("item %d (profile_chunk): %w", n, err))
			}
		}
		off = end + 1
	}
	return errors.Join(errs...)
}

func checkProfileChunk(payload []byte, platform *string) error {
	if platform == nil || *platform == "" {
		return errors.New("item header has no platform")
	}
	return profilechunk.CheckRelay(payload, *platform)
}

// nextLine returns the line starting at off and the offset past its newline.
func nextLine(data []byte, off int) (line []byte, next int) {
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		return data[off : off+i], off + i + 1
	}
	return data[off:], len(data)
}
