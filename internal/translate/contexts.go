package translate

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Event contexts from the resource, as Sentry's SDKs fill them, so Relay
// derives the same tags (runtime, runtime.name, os, os.name, device...).
// Keys follow Relay's context types (relay-event-schema protocol/contexts):
//
//	runtime         name, version, raw_description  <- process.runtime.name, .version, .description
//	os              name, version, build, raw_description
//	                                                 <- os.name (else os.type), os.version, os.build_id, os.description
//	device          arch, model, model_id, manufacturer
//	                                                 <- host.arch, device.model.name, device.model.identifier, device.manufacturer
//	cloud_resource  cloud.provider, cloud.platform, cloud.account.id, cloud.region,
//	                cloud.availability_zone, host.id, host.type (Relay's keys are the OTel names)
//	k8s             every string k8s.* attribute, keys as in OTel (an "other" context for Relay)
//
// sentry-go's own contexts are runtime {name: go, version: go1.x} and os
// {name: linux}: the OTel Go SDK's process.runtime.* and os.type give the same
// values. Each context is written only when one of its values is present. They
// are rendered once per resource (resourceContexts) and copied into every
// transaction and error event; contexts.otel.resource keeps everything.

// maxContextValue bounds one context value; they are short identifiers.
const maxContextValue = 512

// maxK8sKeys bounds the k8s context.
const maxK8sKeys = 32

// ctxAttrs are the resource attributes the contexts use.
type ctxAttrs struct {
	runtimeName, runtimeVersion, runtimeDesc   string
	osName, osType, osVersion, osBuild, osDesc string
	arch, model, modelID, manufacturer         string
	cloud                                      [7]string // in cloudKeys order
	hasCloud                                   bool
	k8s                                        bool
}

var cloudKeys = [7]string{"cloud.provider", "cloud.platform", "cloud.account.id", "cloud.region", "cloud.availability_zone", "host.id", "host.type"}

// see records one resource attribute.
func (c *ctxAttrs) see(k string, v pcommon.Value) {
	if v.Type() != pcommon.ValueTypeStr {
		return
	}
	s := v.Str()
	switch k {
	case "process.runtime.name":
		c.runtimeName = s
	case "process.runtime.version":
		c.runtimeVersion = s
	case "process.runtime.description":
		c.runtimeDesc = s
	case "os.name":
		c.osName = s
	case "os.type":
		c.osType = s
	case "os.version":
		c.osVersion = s
	case "os.build_id":
		c.osBuild = s
	case "os.description":
		c.osDesc = s
	case "host.arch":
		c.arch = s
	case "device.model.name":
		c.model = s
	case "device.model.identifier":
		c.modelID = s
	case "device.manufacturer":
		c.manufacturer = s
	default:
		for i, ck := range cloudKeys {
			if k == ck {
				c.cloud[i] = s
				c.hasCloud = c.hasCloud || i < 5 // host.id/type alone are no cloud
				return
			}
		}
		if strings.HasPrefix(k, "k8s.") {
			c.k8s = true
		}
	}
}

// writeResourceContexts renders the contexts of a resource as members (each
// with a leading comma), to follow "trace" inside "contexts".
func (*state) writeResourceContexts(w *jw, r pcommon.Resource, c *ctxAttrs) {
	obj := func(key string, kv ...string) {
		n := 0
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				continue
			}
			if n == 0 {
				w.raw(`,"`)
				w.raw(key)
				w.raw(`":{`)
			}
			w.strField(&n, kv[i], kv[i+1], maxContextValue)
		}
		if n > 0 {
			w.byte('}')
		}
	}
	obj("runtime", "name", c.runtimeName, "version", c.runtimeVersion, "raw_description", c.runtimeDesc)
	osName := c.osName
	if osName == "" {
		osName = c.osType
	}
	obj("os", "name", osName, "version", c.osVersion, "build", c.osBuild, "raw_description", c.osDesc)
	obj("device", "arch", c.arch, "model", c.model, "model_id", c.modelID, "manufacturer", c.manufacturer)
	if c.hasCloud {
		kv := make([]string, 0, 2*len(cloudKeys)) // rare: once per cloud resource
		for i, k := range cloudKeys {
			kv = append(kv, k, c.cloud[i])
		}
		obj("cloud_resource", kv...)
	}
	if c.k8s {
		n := 0
		for k, v := range r.Attributes().All() {
			if n >= maxK8sKeys || v.Type() != pcommon.ValueTypeStr || !strings.HasPrefix(k, "k8s.") || v.Str() == "" {
				continue
			}
			if n == 0 {
				w.raw(`,"k8s":{"type":"k8s"`)
				n++
			}
			w.comma(&n)
			w.str(k, maxContextValue)
			w.byte(':')
			w.str(v.Str(), maxContextValue)
		}
		if n > 0 {
			w.byte('}')
		}
	}
}

// resourceContexts copies the pre-rendered contexts of a resource.
func (s *state) resourceContexts(w *jw, ri *resInfo) {
	w.b = append(w.b, s.frag.b[ri.ctx.a:ri.ctx.b]...)
}
