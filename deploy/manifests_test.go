package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/api/krusty"
	kusttypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	k8sjson "sigs.k8s.io/json"
)

// kubeDir is the kustomization, from this module's folder; the README's
// `kubectl apply -k deploy/kubernetes` applies what render builds from it.
const kubeDir = "kubernetes"

// collectorConfig is the collector's configuration in the image and the ConfigMap.
const collectorConfig = "deploy/kubernetes/collector.yaml"

const mib = 1 << 20

// strict decodes YAML into a typed value as the API server does with field validation
// Strict: field names match case-sensitively, and an unknown field or a duplicate key is
// an error (sigs.k8s.io/yaml's own UnmarshalStrict matches names case-insensitively,
// as encoding/json does, so `secretKeyref` would pass it).
func strict(doc []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strictErrs, err := k8sjson.UnmarshalStrict(j, v, k8sjson.DisallowUnknownFields, k8sjson.DisallowDuplicateFields)
	if err != nil {
		return err
	}
	return errors.Join(strictErrs...)
}

// decodeStrict decodes one manifest into its k8s.io/api type. A kind without a type
// here, an unknown or misspelt field, and a duplicate key all fail.
func decodeStrict(doc []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	var obj any
	switch tm.APIVersion + " " + tm.Kind {
	case "v1 Namespace":
		obj = &corev1.Namespace{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	case "autoscaling/v2 HorizontalPodAutoscaler":
		obj = &autoscalingv2.HorizontalPodAutoscaler{}
	case "policy/v1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	default:
		return nil, fmt.Errorf("%q %q: no k8s.io/api type for it in decodeStrict", tm.APIVersion, tm.Kind)
	}
	if err := strict(doc, obj); err != nil {
		return nil, fmt.Errorf("%s: %w", tm.Kind, err)
	}
	return obj, nil
}

// tier is the gateway tier's objects, one of each.
type tier struct {
	namespace *corev1.Namespace
	deploy    *appsv1.Deployment
	headless  *corev1.Service // clusterIP: None
	senders   *corev1.Service
	hpa       *autoscalingv2.HorizontalPodAutoscaler
	pdb       *policyv1.PodDisruptionBudget
	config    *corev1.ConfigMap // only in the rendered output (configMapGenerator)
}

func (tr *tier) add(t *testing.T, obj any) {
	t.Helper()
	set := func(taken bool, name string) {
		if taken {
			t.Fatalf("two objects for %s", name)
		}
	}
	switch o := obj.(type) {
	case *corev1.Namespace:
		set(tr.namespace != nil, "the Namespace")
		tr.namespace = o
	case *appsv1.Deployment:
		set(tr.deploy != nil, "the Deployment")
		tr.deploy = o
	case *corev1.Service:
		if o.Spec.ClusterIP == corev1.ClusterIPNone {
			set(tr.headless != nil, "the headless Service")
			tr.headless = o
		} else {
			set(tr.senders != nil, "the senders' Service")
			tr.senders = o
		}
	case *autoscalingv2.HorizontalPodAutoscaler:
		set(tr.hpa != nil, "the HorizontalPodAutoscaler")
		tr.hpa = o
	case *policyv1.PodDisruptionBudget:
		set(tr.pdb != nil, "the PodDisruptionBudget")
		tr.pdb = o
	case *corev1.ConfigMap:
		set(tr.config != nil, "the ConfigMap")
		tr.config = o
	}
}

func (tr *tier) complete(t *testing.T, withConfig bool) {
	t.Helper()
	if tr.namespace == nil || tr.deploy == nil || tr.headless == nil || tr.senders == nil || tr.hpa == nil || tr.pdb == nil {
		t.Fatalf("the tier lacks an object: namespace %v, deployment %v, headless service %v, senders' service %v, hpa %v, pdb %v",
			tr.namespace != nil, tr.deploy != nil, tr.headless != nil, tr.senders != nil, tr.hpa != nil, tr.pdb != nil)
	}
	if withConfig && tr.config == nil {
		t.Fatal("the rendered tier has no ConfigMap")
	}
}

// container is the Deployment's one container.
func (tr *tier) container(t *testing.T) *corev1.Container {
	t.Helper()
	cs := tr.deploy.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("the Deployment has %d containers, want 1", len(cs))
	}
	return &cs[0]
}

// kustomization reads kubernetes/kustomization.yaml strictly into kustomize's own type.
func kustomization(t *testing.T) *kusttypes.Kustomization {
	t.Helper()
	var k kusttypes.Kustomization
	if err := strict(read(t, "deploy/kubernetes/kustomization.yaml"), &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	return &k
}

// generatedFrom lists the files the kustomization's generators read.
func generatedFrom(k *kusttypes.Kustomization) map[string]string {
	files := map[string]string{} // file -> key
	for _, g := range k.ConfigMapGenerator {
		for _, f := range g.FileSources {
			key, file, ok := strings.Cut(f, "=")
			if !ok {
				key, file = filepath.Base(f), f
			}
			files[file] = key
		}
	}
	return files
}

// sourceTier decodes every manifest file of the kustomization.
func sourceTier(t *testing.T) *tier {
	t.Helper()
	var tr tier
	for _, r := range kustomization(t).Resources {
		for i, doc := range documents(read(t, "deploy/kubernetes/"+r)) {
			obj, err := decodeStrict(doc)
			if err != nil {
				t.Fatalf("%s, document %d: %v", r, i+1, err)
			}
			tr.add(t, obj)
		}
	}
	tr.complete(t, false)
	return &tr
}

// render builds the kustomization as `kubectl apply -k` does (kustomize's library).
func render(t *testing.T) []byte {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), kubeDir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", kubeDir, err)
	}
	b, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func renderedTier(t *testing.T) *tier {
	t.Helper()
	var tr tier
	for i, doc := range documents(render(t)) {
		obj, err := decodeStrict(doc)
		if err != nil {
			t.Fatalf("rendered document %d: %v\n%s", i+1, err, doc)
		}
		tr.add(t, obj)
	}
	tr.complete(t, true)
	return &tr
}

func TestEveryManifestDecodesStrictly(t *testing.T) {
	k := kustomization(t)
	gen := generatedFrom(k)
	files, err := filepath.Glob(filepath.Join(kubeDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		if name == "kustomization.yaml" || gen[name] != "" {
			continue
		}
		if !slices.Contains(k.Resources, name) {
			t.Errorf("%s is not among the kustomization's resources: `kubectl apply -k` would leave it out", name)
		}
	}
	for _, r := range k.Resources {
		if _, err := os.Stat(filepath.Join(kubeDir, r)); err != nil {
			t.Errorf("kustomization resource %s: %v", r, err)
		}
	}
	sourceTier(t) // decodes each document strictly, and fails on a missing or doubled object
}

// The strictness the tests rely on: a misspelt field fails the decoding, in a manifest
// and in the kustomization.
func TestStrictDecodingRejectsMisspeltFields(t *testing.T) {
	for _, c := range []struct{ file, from, to string }{
		{"deploy/kubernetes/deployment.yaml", "readinessProbe:", "readinesProbe:"},
		{"deploy/kubernetes/deployment.yaml", "secretKeyRef:", "secretKeyref:"},
		{"deploy/kubernetes/service.yaml", "sessionAffinity:", "sessionAfinity:"},
		{"deploy/kubernetes/hpa.yaml", "averageUtilization:", "averageUtilisation:"},
		{"deploy/kubernetes/pdb.yaml", "maxUnavailable:", "maxUnavailble:"},
		{"deploy/kubernetes/service-headless.yaml", "clusterIP:", "clusterIp:"},
	} {
		b := read(t, c.file)
		if !bytes.Contains(b, []byte(c.from)) {
			t.Fatalf("%s has no %q", c.file, c.from)
		}
		if _, err := decodeStrict(bytes.Replace(b, []byte(c.from), []byte(c.to), 1)); err == nil || !strings.Contains(err.Error(), "unknown field") {
			t.Errorf("%s with %q: got %v, want an unknown field", c.file, c.to, err)
		}
	}
	var k kusttypes.Kustomization
	b := bytes.Replace(read(t, "deploy/kubernetes/kustomization.yaml"), []byte("configMapGenerator:"), []byte("configMapGenerators:"), 1)
	if err := strict(b, &k); err == nil {
		t.Error("a misspelt kustomization key decoded")
	}
}

func TestKustomizationRenders(t *testing.T) {
	k := kustomization(t)
	tr := renderedTier(t)
	if tr.namespace.Name != k.Namespace {
		t.Errorf("Namespace %q, kustomization namespace %q", tr.namespace.Name, k.Namespace)
	}
	for _, m := range []metav1.ObjectMeta{tr.deploy.ObjectMeta, tr.headless.ObjectMeta, tr.senders.ObjectMeta, tr.hpa.ObjectMeta, tr.pdb.ObjectMeta, tr.config.ObjectMeta} {
		if m.Namespace != k.Namespace {
			t.Errorf("%s is in namespace %q, want %q", m.Name, m.Namespace, k.Namespace)
		}
	}

	// The ConfigMap holds collector.yaml as is, and the Deployment mounts it by its hashed name.
	if len(k.ConfigMapGenerator) != 1 {
		t.Fatalf("%d configMapGenerators, want 1", len(k.ConfigMapGenerator))
	}
	gen := k.ConfigMapGenerator[0]
	t.Logf("rendered: ConfigMap %s, image %s", tr.config.Name, tr.container(t).Image)
	if !strings.HasPrefix(tr.config.Name, gen.Name+"-") {
		t.Errorf("ConfigMap %q is not %q with a content hash", tr.config.Name, gen.Name)
	}
	keys := generatedFrom(k)
	key := keys[filepath.Base(collectorConfig)]
	if key == "" || len(keys) != 1 {
		t.Fatalf("the generator reads %v, want %s only", keys, filepath.Base(collectorConfig))
	}
	if got, want := tr.config.Data[key], string(read(t, collectorConfig)); got != want {
		t.Errorf("the ConfigMap's %s differs from %s", key, collectorConfig)
	}
	vol := configVolume(t, tr)
	if vol.ConfigMap.Name != tr.config.Name {
		t.Errorf("the Deployment mounts ConfigMap %q, the kustomization makes %q", vol.ConfigMap.Name, tr.config.Name)
	}

	// The image: the kustomization's images entry, at the distribution's version.
	if len(k.Images) != 1 {
		t.Fatalf("%d images entries, want 1", len(k.Images))
	}
	img := k.Images[0]
	version := at(t, tree(t, read(t, "builder-config.yaml")), "dist", "version").(string)
	if img.NewTag != version {
		t.Errorf("kustomization image tag %q, builder-config.yaml dist.version %q", img.NewTag, version)
	}
	if got, want := tr.container(t).Image, img.NewName+":"+img.NewTag; got != want {
		t.Errorf("rendered image %q, want %q", got, want)
	}
	if src := sourceTier(t).container(t).Image; src != img.Name+":"+version {
		t.Errorf("deployment.yaml's image %q, want %s:%s (the images entry's name, the version)", src, img.Name, version)
	}
}

// configVolume is the Deployment's volume that holds the collector's configuration.
func configVolume(t *testing.T, tr *tier) *corev1.Volume {
	t.Helper()
	for i, v := range tr.deploy.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil {
			return &tr.deploy.Spec.Template.Spec.Volumes[i]
		}
	}
	t.Fatal("the Deployment mounts no ConfigMap")
	return nil
}

// validate runs the built collector's `validate` on a configuration, with DSNs that
// name no real project (the configurations read ${env:SENTRY_DSN} and, for
// testdata/gateway-tenants.yaml, ${env:SENTRY_DSN_PAYMENTS}, ${env:SENTRY_DSN_SEARCH} and
// ${env:SENDERS_HTPASSWD_FILE}).
func validate(t *testing.T, bin, config string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(bin, "validate", "--config="+config)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "SENTRY_DSN") }),
		"SENTRY_DSN=https://public@sentry.invalid/1", "SENTRY_DSN_PAYMENTS=https://public@sentry.invalid/2",
		"SENTRY_DSN_SEARCH=https://public@sentry.invalid/3", "SENDERS_HTPASSWD_FILE=/etc/otelcol/senders.htpasswd")
	return cmd.CombinedOutput()
}

func TestCollectorConfigValidates(t *testing.T) {
	bin := otelcol(t)
	for _, c := range []string{collectorConfig, "testdata/gateway.yaml", "testdata/gateway-tenants.yaml"} {
		if out, err := validate(t, bin, filepath.Join(root, c)); err != nil {
			t.Errorf("otelcol-sentry validate --config=%s: %v\n%s", c, err, out)
		}
	}
	// and validate is strict: a misspelt key fails it
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	b := bytes.Replace(read(t, collectorConfig), []byte("spike_limit_mib:"), []byte("spike_limit_mb:"), 1)
	if err := os.WriteFile(bad, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := validate(t, bin, bad); err == nil {
		t.Errorf("validate accepted a misspelt key:\n%s", out)
	}
}

// port returns the port of a host:port endpoint.
func port(t *testing.T, endpoint string) int32 {
	t.Helper()
	_, p, err := net.SplitHostPort(endpoint)
	if err != nil {
		t.Fatalf("endpoint %q: %v", endpoint, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("endpoint %q: %v", endpoint, err)
	}
	return int32(n)
}

func num(t *testing.T, v any) int64 {
	t.Helper()
	switch v := v.(type) {
	case float64:
		return int64(v)
	case int64:
		return v
	case int:
		return int64(v)
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%q is not a number", v)
		}
		return n
	}
	t.Fatalf("%v (%T) is not a number", v, v)
	return 0
}

// containerPort resolves a port by name or number to the container's port number.
func containerPort(t *testing.T, c *corev1.Container, p intstr.IntOrString) int32 {
	t.Helper()
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return cp.ContainerPort
		}
	}
	t.Fatalf("the container has no port %s", p.String())
	return 0
}

// The probe port and path, the OTLP and metrics ports, the Services' names and the
// Secret agree with the collector's configuration, testdata/scale-out.yaml, the
// Containerfile and the README.
func TestTierAgreesWithTheConfig(t *testing.T) {
	tr := sourceTier(t)
	k := kustomization(t)
	cfg := tree(t, read(t, collectorConfig))
	c := tr.container(t)
	pod := tr.deploy.Spec.Template
	readme := read(t, "README.md")
	deploySection := section(t, readme, "## Deploy")

	// Health: healthcheckv2 with component status, and every probe on its /status.
	hc := at(t, cfg, "extensions", "healthcheckv2")
	if at(t, hc, "use_v2") != true {
		t.Error("healthcheckv2 without use_v2: true has no component status")
	}
	at(t, hc, "component_health")
	healthPort := port(t, at(t, hc, "http", "endpoint").(string))
	statusPath := at(t, hc, "http", "status", "path").(string)
	if !slices.Contains(at(t, cfg, "service", "extensions").([]any), any("healthcheckv2")) {
		t.Error("service::extensions does not enable healthcheckv2")
	}
	for name, p := range map[string]*corev1.Probe{"startupProbe": c.StartupProbe, "livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s: no httpGet probe", name)
			continue
		}
		if got := containerPort(t, c, p.HTTPGet.Port); got != healthPort {
			t.Errorf("%s probes port %d, the health endpoint is on %d", name, got, healthPort)
		}
		if p.HTTPGet.Path != statusPath {
			t.Errorf("%s probes %s, the health endpoint serves %s", name, p.HTTPGet.Path, statusPath)
		}
	}
	probe := fmt.Sprintf(":%d%s", healthPort, statusPath)
	if !strings.Contains(deploySection, probe) {
		t.Errorf("the README's Deploy section does not name the probe %s", probe)
	}

	// OTLP and the collector's metrics: the receivers' and the reader's ports are the
	// container's named ports, and the scrape annotation's.
	otlp := map[string]int32{
		"otlp-grpc": port(t, at(t, cfg, "receivers", "otlp", "protocols", "grpc", "endpoint").(string)),
		"otlp-http": port(t, at(t, cfg, "receivers", "otlp", "protocols", "http", "endpoint").(string)),
	}
	for name, p := range otlp {
		if got := containerPort(t, c, intstr.FromString(name)); got != p {
			t.Errorf("container port %s is %d, the receiver listens on %d", name, got, p)
		}
	}
	prom := at(t, cfg, "service", "telemetry", "metrics", "readers", 0, "pull", "exporter", "prometheus")
	metricsPort := int32(num(t, at(t, prom, "port")))
	if host := at(t, prom, "host"); host != "0.0.0.0" {
		t.Errorf("the metrics reader listens on %v: Prometheus cannot scrape it", host)
	}
	if got := containerPort(t, c, intstr.FromString("metrics")); got != metricsPort {
		t.Errorf("container port metrics is %d, the reader listens on %d", got, metricsPort)
	}
	if got := pod.Annotations["prometheus.io/port"]; got != strconv.Itoa(int(metricsPort)) {
		t.Errorf("prometheus.io/port %q, the reader listens on %d", got, metricsPort)
	}

	// Selectors: the Deployment's, the Services', the PDB's and the spread's select the pods.
	podLabels := labels.Set(pod.Labels)
	sel, err := metav1.LabelSelectorAsSelector(tr.deploy.Spec.Selector)
	if err != nil || !sel.Matches(podLabels) {
		t.Errorf("the Deployment's selector does not select its pods (%v)", err)
	}
	for _, s := range []*corev1.Service{tr.headless, tr.senders} {
		if len(s.Spec.Selector) == 0 || !labels.SelectorFromSet(s.Spec.Selector).Matches(podLabels) {
			t.Errorf("Service %s does not select the gateway's pods", s.Name)
		}
		for _, sp := range s.Spec.Ports {
			if got := containerPort(t, c, sp.TargetPort); got != sp.Port {
				t.Errorf("Service %s port %s: %d forwards to %d", s.Name, sp.Name, sp.Port, got)
			}
		}
	}
	if sel, err := metav1.LabelSelectorAsSelector(tr.pdb.Spec.Selector); err != nil || !sel.Matches(podLabels) {
		t.Errorf("the PodDisruptionBudget does not select the gateway's pods (%v)", err)
	}
	for _, tsc := range pod.Spec.TopologySpreadConstraints {
		if sel, err := metav1.LabelSelectorAsSelector(tsc.LabelSelector); err != nil || !sel.Matches(podLabels) {
			t.Errorf("a topology spread constraint does not select the gateway's pods (%v)", err)
		}
	}
	if ref := tr.hpa.Spec.ScaleTargetRef; ref.Kind != "Deployment" || ref.Name != tr.deploy.Name || ref.APIVersion != "apps/v1" {
		t.Errorf("the HPA scales %v, not the Deployment %s", ref, tr.deploy.Name)
	}
	if tr.deploy.Spec.Replicas != nil {
		t.Error("the Deployment sets replicas: `kubectl apply` would reset what the HPA chose")
	}
	if mu := tr.pdb.Spec.MaxUnavailable; mu == nil || tr.hpa.Spec.MinReplicas == nil || int32(mu.IntValue()) >= *tr.hpa.Spec.MinReplicas {
		t.Error("the PDB's maxUnavailable must stay below the HPA's minReplicas: a drain would take the whole tier")
	}

	// The Services: the senders' carries both OTLP ports; the headless one is what the
	// front tier resolves, on the port it dials.
	for name, p := range otlp {
		if !slices.ContainsFunc(tr.senders.Spec.Ports, func(sp corev1.ServicePort) bool { return sp.Name == name && sp.Port == p }) {
			t.Errorf("Service %s has no port %s %d", tr.senders.Name, name, p)
		}
	}
	fqdn := tr.headless.Name + "." + k.Namespace + ".svc.cluster.local"
	front := tree(t, read(t, "testdata/scale-out.yaml"))
	lbs := 0
	for name, e := range at(t, front, "exporters").(map[string]any) {
		if !strings.HasPrefix(name, "loadbalancing") {
			continue
		}
		lbs++
		dns := at(t, e, "resolver", "dns")
		if h := at(t, dns, "hostname"); h != fqdn {
			t.Errorf("testdata/scale-out.yaml %s resolves %v, the headless Service is %s", name, h, fqdn)
		}
		p := int32(num(t, at(t, dns, "port")))
		if !slices.ContainsFunc(tr.headless.Spec.Ports, func(sp corev1.ServicePort) bool { return sp.Port == p }) || p != otlp["otlp-grpc"] {
			t.Errorf("testdata/scale-out.yaml %s dials port %d: not the headless Service's OTLP gRPC port", name, p)
		}
	}
	if lbs == 0 {
		t.Error("testdata/scale-out.yaml has no loadbalancing exporter")
	}
	for _, name := range []string{fqdn, tr.senders.Name + "." + k.Namespace} {
		if !strings.Contains(deploySection, name) {
			t.Errorf("the README's Deploy section does not name %s", name)
		}
	}

	// The DSN: from a Secret, through the environment, never in the configuration.
	var ref *corev1.SecretKeySelector
	for _, e := range c.Env {
		if e.Name == "SENTRY_DSN" && e.ValueFrom != nil {
			ref = e.ValueFrom.SecretKeyRef
		}
	}
	if ref == nil {
		t.Fatal("SENTRY_DSN does not come from a secretKeyRef")
	}
	if dsn := at(t, cfg, "exporters", "sentry", "dsn"); dsn != "${env:SENTRY_DSN}" {
		t.Errorf("the exporter's dsn is %v, want ${env:SENTRY_DSN}", dsn)
	}
	create := fmt.Sprintf("kubectl -n %s create secret generic %s --from-literal=%s=", k.Namespace, ref.Name, ref.Key)
	if !strings.Contains(deploySection, create) {
		t.Errorf("the README's Deploy section does not create the Secret as the Deployment reads it: %q", create)
	}

	// The configuration's path: the container's --config is the mounted key, and the
	// image's default (Containerfile) is the same path.
	vol := configVolume(t, tr)
	var mountPath string
	for _, m := range c.VolumeMounts {
		if m.Name == vol.Name {
			mountPath = m.MountPath
		}
	}
	if len(vol.ConfigMap.Items) != 1 || vol.ConfigMap.Items[0].Key != generatedFrom(k)[filepath.Base(collectorConfig)] {
		t.Fatalf("the config volume's items %v: want the generator's key", vol.ConfigMap.Items)
	}
	configPath := mountPath + "/" + vol.ConfigMap.Items[0].Path
	if !slices.Contains(c.Args, "--config="+configPath) {
		t.Errorf("the container's args %v do not read %s", c.Args, configPath)
	}
	cf := string(read(t, "Containerfile"))
	if !strings.Contains(cf, `"--config=`+configPath+`"`) {
		t.Errorf("the Containerfile's default --config is not %s", configPath)
	}

	// The image's user and ports.
	user := regexp.MustCompile(`(?m)^USER (\d+)(?::(\d+))?\s*$`).FindStringSubmatch(cf)
	sc := pod.Spec.SecurityContext
	if user == nil || sc == nil || sc.RunAsUser == nil || strconv.Itoa(int(*sc.RunAsUser)) != user[1] {
		t.Errorf("the Containerfile's USER %v and the pod's runAsUser differ (or either is missing)", user)
	}
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("the pod does not require runAsNonRoot")
	}
	expose := regexp.MustCompile(`(?m)^EXPOSE (.+)$`).FindStringSubmatch(cf)
	for _, p := range []int32{healthPort, otlp["otlp-grpc"], otlp["otlp-http"], metricsPort} {
		if expose == nil || !slices.Contains(strings.Fields(expose[1]), strconv.Itoa(int(p))) {
			t.Errorf("the Containerfile does not EXPOSE %d", p)
		}
	}
}

// The memory figures derive from the README's bound, agree with each other, and are
// written the same in the configuration's comment and docs/deploy.md.
func TestMemoryFromTheBound(t *testing.T) {
	readme := read(t, "README.md")
	m := regexp.MustCompile(`peak RSS \*\*≤ (\d+) MiB\*\*`).FindSubmatch([]byte(section(t, readme, "## Limits")))
	if m == nil {
		t.Fatal("the README's Limits section states no peak RSS bound (peak RSS **≤ N MiB**)")
	}
	bound, _ := strconv.ParseInt(string(m[1]), 10, 64)

	tr := sourceTier(t)
	c := tr.container(t)
	limit := c.Resources.Limits.Memory().Value() / mib
	request := c.Resources.Requests.Memory().Value() / mib
	ml := at(t, tree(t, read(t, collectorConfig)), "processors", "memory_limiter").(map[string]any)
	if _, ok := ml["limit_percentage"]; ok {
		t.Error("memory_limiter: limit_mib, not limit_percentage (the figures are checked here)")
	}
	limitMiB := num(t, at(t, ml, "limit_mib"))
	spike := num(t, at(t, ml, "spike_limit_mib"))
	soft := limitMiB - spike
	var gomem int64 = -1
	for _, e := range c.Env {
		if e.Name == "GOMEMLIMIT" {
			if m := regexp.MustCompile(`^(\d+)MiB$`).FindStringSubmatch(e.Value); m != nil {
				gomem, _ = strconv.ParseInt(m[1], 10, 64)
			}
		}
	}
	t.Logf("bound %d MiB; container limit %d MiB, request %d MiB; memory_limiter %d MiB, spike %d, soft %d; GOMEMLIMIT %d MiB",
		bound, limit, request, limitMiB, spike, soft, gomem)

	switch {
	case limit <= bound:
		t.Errorf("the container's memory limit %d MiB is not above the bound %d MiB", limit, bound)
	case request < bound:
		t.Errorf("the memory request %d MiB is below the bound %d MiB: the scheduler would not reserve it", request, bound)
	case limitMiB >= limit:
		t.Errorf("memory_limiter's limit %d MiB is not below the container's %d MiB", limitMiB, limit)
	case soft <= bound:
		t.Errorf("memory_limiter's soft limit %d MiB is not above the bound %d MiB: it would refuse data at the documented worst case", soft, bound)
	case gomem <= limitMiB || gomem >= limit:
		t.Errorf("GOMEMLIMIT %d MiB is not between memory_limiter's limit %d MiB and the container's %d MiB", gomem, limitMiB, limit)
	}

	// The arithmetic beside the figures, in collector.yaml's comment and docs/deploy.md's table.
	figures := map[string]int64{
		"bound": bound, "container memory limit": limit, "limit_mib": limitMiB,
		"spike_limit_mib": spike, "soft limit": soft, "GOMEMLIMIT": gomem,
	}
	comment := stripped(read(t, collectorConfig))
	for name, v := range figures {
		if !strings.Contains(comment, fmt.Sprintf("%d MiB", v)) {
			t.Errorf("collector.yaml's comment does not give the %s, %d MiB", name, v)
		}
	}
	rows := map[string]int64{}
	for _, m := range regexp.MustCompile(`(?m)^\| ([^|]+?) \| \*{0,2}(\d+) MiB\*{0,2} \|`).FindAllStringSubmatch(section(t, read(t, "docs/deploy.md"), "## Memory"), -1) {
		rows[strings.Trim(m[1], "` ")], _ = strconv.ParseInt(m[2], 10, 64)
	}
	for name, v := range figures {
		if got, ok := rows[name]; !ok || got != v {
			t.Errorf("docs/deploy.md's memory table: %s is %d MiB (present %v), the manifests say %d MiB", name, got, ok, v)
		}
	}
	deploySection := section(t, readme, "## Deploy")
	for _, v := range []int64{limit, limitMiB, bound} {
		if !strings.Contains(deploySection, fmt.Sprintf("%d MiB", v)) {
			t.Errorf("the README's Deploy section does not give %d MiB", v)
		}
	}
}

// stripped returns the comment lines of a YAML file, without their # marks.
func stripped(b []byte) string {
	var s strings.Builder
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "#") {
			s.WriteString(strings.TrimLeft(l, "# "))
			s.WriteByte('\n')
		}
	}
	return s.String()
}

// TestReceiversAuthenticate: in the manifests' configuration and the gateway examples,
// every OTLP protocol refuses senders without credentials (an auth extension that the
// service enables); in the manifests, basicauth's htpasswd is a key of a Secret the
// Deployment mounts where the configuration reads it, and the README's Deploy section
// creates that Secret.
func TestReceiversAuthenticate(t *testing.T) {
	for _, c := range []string{collectorConfig, "testdata/gateway.yaml", "testdata/gateway-tenants.yaml"} {
		cfg := tree(t, read(t, c))
		enabled := at(t, cfg, "service", "extensions").([]any)
		for proto := range at(t, cfg, "receivers", "otlp", "protocols").(map[string]any) {
			auth, _ := at(t, cfg, "receivers", "otlp", "protocols", proto).(map[string]any)["auth"].(map[string]any)
			name, _ := auth["authenticator"].(string)
			if name == "" {
				t.Errorf("%s: receivers::otlp::protocols::%s has no auth: any sender may send", c, proto)
				continue
			}
			at(t, cfg, "extensions", name)
			if !slices.Contains(enabled, any(name)) {
				t.Errorf("%s: the authenticator %s is not in service::extensions", c, name)
			}
		}
	}

	tr := sourceTier(t)
	cfg := tree(t, read(t, collectorConfig))
	file := at(t, cfg, "extensions", "basicauth/senders", "htpasswd", "file").(string)
	c := tr.container(t)
	var secret *corev1.SecretVolumeSource
	for _, m := range c.VolumeMounts {
		for _, v := range tr.deploy.Spec.Template.Spec.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			for _, it := range v.Secret.Items {
				if m.MountPath+"/"+it.Path == file {
					secret = v.Secret
					create := fmt.Sprintf("create secret generic %s --from-file=%s=", v.Secret.SecretName, it.Key)
					if !strings.Contains(section(t, read(t, "README.md"), "## Deploy"), create) {
						t.Errorf("the README's Deploy section does not create the senders' Secret as the Deployment reads it: %q", create)
					}
				}
			}
		}
	}
	if secret == nil {
		t.Fatalf("basicauth reads %s, which no Secret volume of the Deployment provides", file)
	}
}
