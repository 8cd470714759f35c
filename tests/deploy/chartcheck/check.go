package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// What a rendered chart must hold, whatever the values, and what Helm does not check: the
// DaemonSet that the agent needs (host PIDs, the capabilities, the probes, the mounts), a config
// that agrees with the pod around it, and the token only ever in a Secret.

type checker struct {
	errs       []string
	values     map[string]interface{} // as Helm computed them (numbers as float64)
	namespace  string                 // the release's
	appVersion string                 // Chart.yaml's
}

func (c *checker) fail(format string, args ...interface{}) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

func m(v interface{}) map[string]interface{} {
	x, _ := v.(map[string]interface{})
	return x
}

func l(v interface{}) []interface{} {
	x, _ := v.([]interface{})
	return x
}

func s(v interface{}) string {
	x, _ := v.(string)
	return x
}

func at(v interface{}, p string) interface{} {
	x, _ := lookup(v, p)
	return x
}

func num(v interface{}) (int64, bool) {
	switch t := v.(type) {
	case json.Number:
		i, err := t.Int64()
		return i, err == nil
	case float64:
		return int64(t), float64(int64(t)) == t
	}
	return 0, false
}

func (c *checker) val(p string) interface{} { return at(c.values, p) }

var labelValue = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
var dnsName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

var clusterScoped = map[string]bool{"ClusterRole": true, "ClusterRoleBinding": true}

// checkManifest checks the rendered documents; text is the manifest as written.
func (c *checker) checkManifest(docs []interface{}, text string) (configText string) {
	byKind := map[string][]map[string]interface{}{}
	for i, d := range docs {
		if d == nil {
			continue
		}
		doc := m(d)
		if doc == nil {
			c.fail("document %d is not a mapping", i+1)
			continue
		}
		kind, name := s(doc["kind"]), s(at(doc, "metadata.name"))
		if s(doc["apiVersion"]) == "" || kind == "" || name == "" {
			c.fail("document %d: apiVersion, kind and metadata.name are required", i+1)
			continue
		}
		if len(name) > 63 || !dnsName.MatchString(name) {
			c.fail("%s %s: not a valid object name", kind, name)
		}
		ns, hasNS := lookup(doc, "metadata.namespace")
		if clusterScoped[kind] && hasNS {
			c.fail("%s %s: cluster-scoped, but has a namespace", kind, name)
		}
		if !clusterScoped[kind] && s(ns) != c.namespace {
			c.fail("%s %s: namespace %v, want the release's (%s)", kind, name, ns, c.namespace)
		}
		for k, v := range m(at(doc, "metadata.labels")) {
			if str, ok := v.(string); !ok || len(str) > 63 || !labelValue.MatchString(str) {
				c.fail("%s %s: label %s=%v is not a valid label value", kind, name, k, v)
			}
		}
		c.checkNulls(kind+" "+name, doc)
		byKind[kind] = append(byKind[kind], doc)
	}
	for _, kind := range []string{"DaemonSet", "ConfigMap"} {
		if len(byKind[kind]) != 1 {
			c.fail("%d %s objects, want 1", len(byKind[kind]), kind)
			return ""
		}
	}
	ds, cm := byKind["DaemonSet"][0], byKind["ConfigMap"][0]
	secrets := map[string]map[string]interface{}{}
	for _, sec := range byKind["Secret"] {
		secrets[s(at(sec, "metadata.name"))] = sec
	}

	if ds["apiVersion"] != "apps/v1" {
		c.fail("DaemonSet: apiVersion %v, want apps/v1", ds["apiVersion"])
	}
	pod := m(at(ds, "spec.template.spec"))
	c.checkSelector(ds)
	c.checkPod(pod)
	ctr := c.container(pod)
	if ctr == nil {
		return ""
	}
	c.checkContainer(ctr)
	mounts := c.checkMounts(pod, ctr)

	// The config file: the path after --config, in a configMap volume of this ConfigMap.
	args := l(ctr["args"])
	cfgPath := ""
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--config" {
			cfgPath = s(args[i+1])
		}
	}
	if cfgPath == "" {
		c.fail("container: no --config FILE in args %v", args)
		return ""
	}
	vol := mounts[path.Dir(cfgPath)]
	if vol == nil || s(at(vol, "configMap.name")) != s(at(cm, "metadata.name")) {
		c.fail("container: --config %s is not in a volume of ConfigMap %s", cfgPath,
			s(at(cm, "metadata.name")))
		return ""
	}
	configText, ok := m(cm["data"])[path.Base(cfgPath)].(string)
	if !ok {
		c.fail("ConfigMap: no key %s", path.Base(cfgPath))
		return ""
	}

	c.checkRBAC(byKind, s(pod["serviceAccountName"]))
	c.checkNetworkPolicy(byKind, ds)
	c.checkToken(text, secrets)
	return configText
}

// checkNulls: no field of the chart's objects is meant to be empty, and Helm renders a value
// that values.yaml does not define as nothing (`helm lint` runs the templates without
// missingkey=error): a null is a template that printed nothing, such as a misspelt value.
func (c *checker) checkNulls(where string, v interface{}) {
	switch t := v.(type) {
	case map[string]interface{}:
		for k, x := range t {
			if x == nil {
				c.fail("%s: %s is empty (a value the template printed as nothing: undefined?)", where,
					k)
			}
			c.checkNulls(where+"."+k, x)
		}
	case []interface{}:
		for i, x := range t {
			if x == nil {
				c.fail("%s[%d] is empty", where, i)
			}
			c.checkNulls(fmt.Sprintf("%s[%d]", where, i), x)
		}
	}
}

func (c *checker) checkSelector(ds map[string]interface{}) {
	sel := m(at(ds, "spec.selector.matchLabels"))
	labels := m(at(ds, "spec.template.metadata.labels"))
	if len(sel) == 0 {
		c.fail("DaemonSet: spec.selector.matchLabels is empty")
	}
	for k, v := range sel {
		if labels[k] != v {
			c.fail("DaemonSet: selector %s=%v does not match the pod template's labels", k, v)
		}
	}
}

func (c *checker) checkPod(pod map[string]interface{}) {
	if pod["hostPID"] != true {
		c.fail("pod: hostPID must be true (every process of the node)")
	}
	if pc := s(c.val("priorityClassName")); s(pod["priorityClassName"]) != pc {
		c.fail("pod: priorityClassName %v, want %q", pod["priorityClassName"], pc)
	}
	all := false
	for _, t := range l(pod["tolerations"]) {
		t := m(t)
		if t["operator"] == "Exists" && t["key"] == nil && t["effect"] == nil {
			all = true
		}
	}
	if !all {
		c.fail("pod: no toleration {operator: Exists}: the agent would skip tainted nodes")
	}
	if c.val("hostNetwork") == true && pod["dnsPolicy"] != "ClusterFirstWithHostNet" {
		c.fail("pod: hostNetwork without dnsPolicy ClusterFirstWithHostNet")
	}
}

func (c *checker) container(pod map[string]interface{}) map[string]interface{} {
	var found map[string]interface{}
	for _, x := range l(pod["containers"]) {
		if s(m(x)["name"]) == "hostprof" {
			found = m(x)
		}
	}
	if found == nil {
		c.fail("pod: no container named hostprof")
	}
	return found
}

func (c *checker) checkContainer(ctr map[string]interface{}) {
	tag := s(c.val("image.tag"))
	if tag == "" {
		tag = c.appVersion
	}
	if want := s(c.val("image.repository")) + ":" + tag; ctr["image"] != want {
		c.fail("container: image %v, want %s", ctr["image"], want)
	}

	// NODE_NAME from the Downward API; $(VAR) only after VAR; no literal secrets.
	defined := map[string]bool{}
	nodeName := false
	for _, e := range l(ctr["env"]) {
		e := m(e)
		name := s(e["name"])
		if name == "NODE_NAME" && at(e, "valueFrom.fieldRef.fieldPath") == "spec.nodeName" {
			nodeName = true
		}
		if v, ok := e["value"].(string); ok {
			for _, ref := range regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).FindAllStringSubmatch(v, -1) {
				if !defined[ref[1]] {
					c.fail("env %s: $(%s) is not defined before it", name, ref[1])
				}
			}
			if strings.Contains(name, "TOKEN") || strings.Contains(name, "HEADERS") {
				c.fail("env %s: a literal value; secrets go through header_files", name)
			}
		}
		defined[name] = true
	}
	if !nodeName {
		c.fail("container: no NODE_NAME from fieldRef spec.nodeName")
	}

	// The HTTP port and the probes on it.
	port, _ := num(c.val("port"))
	portNames := map[string]int64{}
	for _, p := range l(ctr["ports"]) {
		n, _ := num(m(p)["containerPort"])
		portNames[s(m(p)["name"])] = n
	}
	probePort := func(v interface{}) int64 {
		if name, ok := v.(string); ok {
			return portNames[name]
		}
		n, _ := num(v)
		return n
	}
	for probe, want := range map[string]string{"livenessProbe": "/healthz",
		"readinessProbe": "/readyz", "startupProbe": "/healthz"} {
		p := m(ctr[probe])
		if p == nil {
			if probe != "startupProbe" {
				c.fail("container: no %s", probe)
			}
			continue
		}
		if at(p, "httpGet.path") != want || probePort(at(p, "httpGet.port")) != port {
			c.fail("container: %s is %v on port %v, want GET %s on %d", probe,
				at(p, "httpGet.path"), at(p, "httpGet.port"), want, port)
		}
	}

	for _, k := range []string{"requests.cpu", "requests.memory", "limits.cpu", "limits.memory"} {
		if at(ctr["resources"], k) == nil {
			c.fail("container: resources.%s is not set", k)
		}
	}

	sc := m(ctr["securityContext"])
	if n, ok := num(sc["runAsUser"]); !ok || n != 0 {
		c.fail("securityContext: runAsUser %v, want 0 (added capabilities need uid 0)", sc["runAsUser"])
	}
	if c.val("privileged") == true {
		if sc["privileged"] != true {
			c.fail("securityContext: privileged is true in the values, not in the pod")
		}
		return
	}
	if sc["privileged"] == true {
		c.fail("securityContext: privileged, although the values say false")
	}
	if sc["allowPrivilegeEscalation"] != false {
		c.fail("securityContext: allowPrivilegeEscalation must be false")
	}
	drop := l(at(sc, "capabilities.drop"))
	if len(drop) != 1 || drop[0] != "ALL" {
		c.fail("securityContext: capabilities.drop %v, want [ALL]", drop)
	}
	var add, want []string
	for _, x := range l(at(sc, "capabilities.add")) {
		add = append(add, "CAP_"+strings.TrimPrefix(s(x), "CAP_"))
	}
	want = append(want, contractCaps...)
	sort.Strings(add)
	sort.Strings(want)
	if strings.Join(add, " ") != strings.Join(want, " ") {
		c.fail("securityContext: capabilities.add %v, want the contract's %v", add, want)
	}
}

// checkMounts checks that every mount has its volume and every volume a mount, that the host
// paths the agent reads are there read-only, and returns the volumes by mount path.
func (c *checker) checkMounts(pod, ctr map[string]interface{}) map[string]map[string]interface{} {
	vols := map[string]map[string]interface{}{}
	for _, v := range l(pod["volumes"]) {
		v := m(v)
		if vols[s(v["name"])] != nil {
			c.fail("pod: volume %s twice", v["name"])
		}
		vols[s(v["name"])] = v
	}
	byPath := map[string]map[string]interface{}{}
	used := map[string]bool{}
	for _, x := range l(ctr["volumeMounts"]) {
		mt := m(x)
		name, p := s(mt["name"]), s(mt["mountPath"])
		v := vols[name]
		if v == nil {
			c.fail("volumeMount %s (%s): no volume of that name", name, p)
			continue
		}
		if byPath[p] != nil {
			c.fail("volumeMount %s: %s is mounted twice", name, p)
		}
		used[name] = true
		byPath[p] = v
		if hp := s(at(v, "hostPath.path")); hp != "" && p != "/var/cache/hostprof" &&
			mt["readOnly"] != true {
			c.fail("volumeMount %s: host path %s must be read-only", name, hp)
		}
	}
	for name := range vols {
		if !used[name] {
			c.fail("volume %s is not mounted", name)
		}
	}
	for _, p := range []string{"/sys/kernel/tracing", "/sys/fs/cgroup", "/sys/kernel/btf"} {
		if v := byPath[p]; v == nil || at(v, "hostPath.path") != p {
			c.fail("container: the host's %s is not mounted at %s", p, p)
		}
	}
	if v := byPath["/var/cache/hostprof"]; v == nil || (v["emptyDir"] == nil && v["hostPath"] == nil) {
		c.fail("container: no emptyDir or hostPath volume at /var/cache/hostprof")
	}
	return byPath
}

// checkNetworkPolicy: rendered exactly when networkPolicy.enabled and not hostNetwork (a
// hostNetwork pod is outside NetworkPolicies), selecting the DaemonSet's pods, Ingress only (the
// exports are left alone), and letting in only the agent's port from the scraper's namespaces.
func (c *checker) checkNetworkPolicy(byKind map[string][]map[string]interface{}, ds map[string]interface{}) {
	pols := byKind["NetworkPolicy"]
	want := c.val("networkPolicy.enabled") == true && c.val("hostNetwork") != true
	if !want {
		if len(pols) != 0 {
			c.fail("%d NetworkPolicies, want none (networkPolicy.enabled false or hostNetwork)", len(pols))
		}
		return
	}
	if len(pols) != 1 {
		c.fail("%d NetworkPolicies, want 1", len(pols))
		return
	}
	np := pols[0]
	podLabels := m(at(ds, "spec.template.metadata.labels"))
	sel := m(at(np, "spec.podSelector.matchLabels"))
	if len(sel) == 0 {
		c.fail("NetworkPolicy: empty podSelector would select every pod of the namespace")
	}
	for k, v := range sel {
		if podLabels[k] != v {
			c.fail("NetworkPolicy: podSelector %s=%v does not select the DaemonSet's pods", k, v)
		}
	}
	types := l(at(np, "spec.policyTypes"))
	if len(types) != 1 || types[0] != "Ingress" {
		c.fail("NetworkPolicy: policyTypes %v, want [Ingress]", types)
	}
	rules := l(at(np, "spec.ingress"))
	if len(rules) != 1 {
		c.fail("NetworkPolicy: %d ingress rules, want 1", len(rules))
		return
	}
	port, _ := num(c.val("port"))
	ports := l(m(rules[0])["ports"])
	if len(ports) != 1 {
		c.fail("NetworkPolicy: %d ports, want the agent's one", len(ports))
	} else if n, _ := num(m(ports[0])["port"]); n != port {
		c.fail("NetworkPolicy: port %v, want %v", m(ports[0])["port"], port)
	}
	from := l(m(rules[0])["from"])
	if len(from) != 1 || len(m(at(from[0], "namespaceSelector"))) == 0 {
		c.fail("NetworkPolicy: ingress must come from the scraper's namespaceSelector only: %v", from)
	}
}

func (c *checker) checkRBAC(byKind map[string][]map[string]interface{}, sa string) {
	if c.val("serviceAccount.create") == true {
		ok := false
		for _, a := range byKind["ServiceAccount"] {
			ok = ok || at(a, "metadata.name") == sa
		}
		if !ok {
			c.fail("ServiceAccount %s is not rendered", sa)
		}
	}
	if c.val("rbac.create") != true {
		return
	}
	roles, bindings := byKind["ClusterRole"], byKind["ClusterRoleBinding"]
	if len(roles) != 1 || len(bindings) != 1 {
		c.fail("rbac.create: %d ClusterRoles and %d bindings, want 1 and 1", len(roles), len(bindings))
		return
	}
	granted := map[string]bool{}
	for _, r := range l(roles[0]["rules"]) {
		r := m(r)
		if !containsAny(l(r["apiGroups"]), "") || !containsAny(l(r["verbs"]), "get") {
			continue
		}
		for _, res := range l(r["resources"]) {
			granted[s(res)] = true
		}
	}
	want := []string{"nodes", "nodes/pods"}
	if c.val("rbac.nodesProxy") == true {
		want = append(want, "nodes/proxy")
	} else if granted["nodes/proxy"] {
		c.fail("ClusterRole: get on nodes/proxy although rbac.nodesProxy is false")
	}
	for _, res := range want {
		if !granted[res] {
			c.fail("ClusterRole: no get on %s", res)
		}
	}
	b := bindings[0]
	if at(b, "roleRef.kind") != "ClusterRole" || at(b, "roleRef.name") != at(roles[0], "metadata.name") {
		c.fail("ClusterRoleBinding: roleRef is not the ClusterRole")
	}
	ok := false
	for _, sub := range l(b["subjects"]) {
		sub := m(sub)
		ok = ok || (sub["kind"] == "ServiceAccount" && sub["name"] == sa &&
			sub["namespace"] == c.namespace)
	}
	if !ok {
		c.fail("ClusterRoleBinding: does not bind ServiceAccount %s/%s", c.namespace, sa)
	}
}

func containsAny(list []interface{}, want string) bool {
	for _, x := range list {
		if x == want {
			return true
		}
	}
	return false
}

// checkToken: a token given as a value is only in its Secret, base64-encoded, never in clear.
func (c *checker) checkToken(text string, secrets map[string]map[string]interface{}) {
	token := s(c.val("token.value"))
	if token == "" || s(c.val("token.header")) == "" {
		return
	}
	if strings.Contains(text, token) {
		c.fail("the token appears in clear in the manifest")
	}
	found := false
	for _, sec := range secrets {
		enc := s(at(sec, "data.token"))
		dec, err := base64.StdEncoding.DecodeString(enc)
		found = found || (err == nil && string(dec) == token)
	}
	if !found {
		c.fail("no Secret holds token.value under the key token")
	}
}

// checkConfig checks the agent's config from the ConfigMap against the pod that runs it (that
// the agent accepts it at all is `hostprof agent --print-config`'s to say, in check.sh): the listen port is the probes', the writable paths are on volumes, and
// header files are in a mounted Secret.
func (c *checker) checkConfig(cfg map[string]interface{}, docs []interface{}) {
	var ds map[string]interface{}
	secrets := map[string]map[string]interface{}{}
	for _, d := range docs {
		switch s(m(d)["kind"]) {
		case "DaemonSet":
			ds = m(d)
		case "Secret":
			secrets[s(at(d, "metadata.name"))] = m(d)
		}
	}
	pod := m(at(ds, "spec.template.spec"))
	var ctr map[string]interface{}
	for _, x := range l(pod["containers"]) {
		if s(m(x)["name"]) == "hostprof" {
			ctr = m(x)
		}
	}
	vols := map[string]map[string]interface{}{}
	for _, v := range l(pod["volumes"]) {
		vols[s(m(v)["name"])] = m(v)
	}
	type mountInfo struct {
		vol      map[string]interface{}
		readOnly bool
	}
	mounts := map[string]mountInfo{}
	for _, x := range l(ctr["volumeMounts"]) {
		mounts[s(m(x)["mountPath"])] = mountInfo{vols[s(m(x)["name"])], m(x)["readOnly"] == true}
	}
	// The mount that holds a file: the longest mount path above it.
	mountOf := func(file string) (string, mountInfo, bool) {
		best := ""
		for p := range mounts {
			if (file == p || strings.HasPrefix(file, p+"/")) && len(p) > len(best) {
				best = p
			}
		}
		mi, ok := mounts[best]
		return best, mi, ok
	}

	port, _ := num(c.val("port"))
	listen := s(cfg["http_listen"])
	if p, err := listenPort(listen); err != nil || p != int(port) ||
		!(strings.HasPrefix(listen, ":") || strings.HasPrefix(listen, "0.0.0.0:") ||
			strings.HasPrefix(listen, "[::]:")) {
		c.fail("config.yaml: http_listen %q, want :%d (the probes come from the kubelet)", listen, port)
	}
	for _, key := range []string{"cache_dir", "export.directory"} {
		dir := s(at(cfg, key))
		if dir == "" {
			continue
		}
		if _, mi, ok := mountOf(dir); !ok || mi.readOnly || (mi.vol["emptyDir"] == nil && mi.vol["hostPath"] == nil) {
			c.fail("config.yaml: %s %s is not on a writable volume (the root filesystem is read-only)", key, dir)
		}
	}
	if d, ok := cfg["export"]; ok {
		if dl, ok := m(d)["deadline"]; ok {
			secs, _ := parseDuration(dl)
			grace, _ := num(pod["terminationGracePeriodSeconds"])
			if float64(grace) <= secs {
				c.fail("pod: terminationGracePeriodSeconds %d is not above export.deadline (%gs)", grace, secs)
			}
		}
	}
	for _, exp := range []string{"otlp", "pyroscope"} {
		for name, file := range m(at(cfg, "export."+exp+".header_files")) {
			p, mi, ok := mountOf(s(file))
			secretName := s(at(mi.vol, "secret.secretName"))
			if !ok || secretName == "" || !mi.readOnly {
				c.fail("config.yaml: header %s: %v is not in a read-only Secret volume", name, file)
				continue
			}
			key := strings.TrimPrefix(s(file), p+"/")
			if items := l(at(mi.vol, "secret.items")); items != nil {
				k := ""
				for _, it := range items {
					if at(it, "path") == key {
						k = s(at(it, "key"))
					}
				}
				if k == "" {
					c.fail("config.yaml: header %s: %s is not among the Secret volume's items", name, key)
					continue
				}
				key = k
			}
			if sec, ok := secrets[secretName]; ok {
				if m(sec["data"])[key] == nil && m(sec["stringData"])[key] == nil {
					c.fail("Secret %s: no key %s for header %s", secretName, key, name)
				}
			} else if secretName != s(c.val("token.existingSecret")) {
				c.fail("config.yaml: header %s: Secret %s is neither rendered nor token.existingSecret", name, secretName)
			}
		}
		for name := range m(at(cfg, "export."+exp+".headers")) {
			if strings.EqualFold(name, s(c.val("token.header"))) {
				c.fail("config.yaml: the token header %s is in export.%s.headers, in clear", name, exp)
			}
		}
	}
	if ca := s(at(cfg, "kubernetes.ca_file")); ca != "" && !strings.HasPrefix(ca, "/var/run/secrets/kubernetes.io/") {
		if _, _, ok := mountOf(ca); !ok {
			c.fail("config.yaml: kubernetes.ca_file %s is on no volume", ca)
		}
	}
}
