package schema

import "strings"

// checkCase is a hand-written blob and the violations Check must report.
// Blobs are written for reading; the tests canonicalize them.
type checkCase struct {
	name   string
	schema string
	blob   string
	want   []Violation
	// deep: the blob nests hundreds of levels, too deep to double
	// each list at every level (TestNoLengthOrPositionConstraints).
	deep bool
}

var checkCases = []checkCase{
	// Numbers: shapes keep only int or float; the verdicts must follow.
	{name: "number int where int", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"p","name":"p.v1","image":"i","properties":[{"type":"olm.csv.metadata","value":{"apiServiceDefinitions":{"owned":[{"name":"n","group":"g","version":"v1","kind":"K","containerPort":8443},{"name":"n","group":"g","version":"v1","kind":"K","containerPort":-1}]}}}]}`},
	{name: "number float where int", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"p","name":"p.v1","image":"i","properties":[{"type":"olm.csv.metadata","value":{"apiServiceDefinitions":{"owned":[{"name":"n","group":"g","version":"v1","kind":"K","containerPort":8443},{"name":"n","group":"g","version":"v1","kind":"K","containerPort":84.5}]}}}]}`,
		want: []Violation{{Path: "properties[0].value.apiServiceDefinitions.owned[1].containerPort", Message: "conflicting values 84.5 and int (mismatched types float and int)"}}},
	{name: "number where string", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"p","name":"p.v1","image":"i","properties":[{"type":"olm.package","value":{"packageName":"p","version":1}},{"type":"olm.package","value":{"packageName":"p","version":1.5}}]}`,
		want: []Violation{
			{Path: "properties[0].value.version", Message: "conflicting values 1 and string (mismatched types int and string)"},
			{Path: "properties[1].value.version", Message: "conflicting values 1.5 and string (mismatched types float and string)"},
		}},
	// Blobs of other schemas only meet _Meta, which is open: any other
	// field, of any value, is allowed.
	{name: "custom schema with any fields", schema: "example.com.note",
		blob: `{"schema":"example.com.note","package":"p","name":7,"entries":"x","relatedImages":[1,null,{"image":""}],"value":{"nested":[[1.5],{"schema":""}]},"Zeta":null}`},
	{name: "custom schema with bad meta fields", schema: "example.com.note",
		blob: `{"schema":"example.com.note","package":"","properties":[{"type":"x"}],"value":{"schema":""}}`,
		want: []Violation{{Path: "package", Message: `invalid value "" (out of bound !="")`}, {Path: "properties[0].value", Message: "incomplete value !=null"}}},
	// Valid blobs.
	{name: "package minimal", schema: "olm.package",
		blob: `{"schema":"olm.package","name":"etcd","defaultChannel":"stable"}`},
	{name: "package full", schema: "olm.package",
		blob: `{"schema":"olm.package","name":"etcd","defaultChannel":"stable","description":"","icon":{"base64data":"PHN2Zz4=","mediatype":"image/svg+xml"},"properties":[{"type":"owner","value":{"team":"x"}}]}`},
	{name: "channel", schema: "olm.channel",
		blob: `{"schema":"olm.channel","package":"etcd","name":"stable","entries":[{"name":"etcd.v2"},{"name":"etcd.v3","replaces":"etcd.v2","skips":["etcd.v1","etcd.v0"],"skipRange":"<3.0.0"}],"properties":[{"type":"x","value":1}]}`},
	{name: "channel without entries", schema: "olm.channel",
		blob: `{"schema":"olm.channel","package":"etcd","name":"stable","entries":[]}`},
	{name: "bundle every property type", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"etcd","name":"etcd.v3","image":"quay.io/etcd/bundle:v3","relatedImages":[{"image":"quay.io/etcd/etcd:v3","name":"etcd"},{"image":"quay.io/etcd/x"},{"image":"quay.io/etcd/y","name":""}],"properties":[
			{"type":"olm.package","value":{"packageName":"etcd","version":"3.0.0"}},
			{"type":"olm.gvk","value":{"group":"etcd.database.coreos.com","version":"v1beta2","kind":"EtcdCluster"}},
			{"type":"olm.package.required","value":{"packageName":"prometheus","versionRange":">0.27.0"}},
			{"type":"olm.gvk.required","value":{"group":"monitoring.coreos.com","version":"v1","kind":"Prometheus"}},
			{"type":"olm.bundle.object","value":{"data":"eyJraW5kIjoiQ1JEIn0="}},
			{"type":"olm.bundle.object","value":{"ref":"objects/csv.yaml"}},
			{"type":"olm.csv.metadata","value":{"annotations":{"alm-examples":"[]","capabilities":"Basic Install"},"apiServiceDefinitions":{},"crdDescriptions":{"owned":[{"name":"etcdclusters.etcd.database.coreos.com","version":"v1beta2","kind":"EtcdCluster","displayName":"etcd Cluster","description":"","resources":[{"kind":"Service","name":"","version":"v1"}],"specDescriptors":[{"path":"size","displayName":"Size","x-descriptors":["urn:alm:descriptor:com.tectonic.ui:podCount"],"value":3}],"statusDescriptors":[{"path":"phase"}]}],"required":[{"name":"a.b.c","version":"v1","kind":"C"}]},"description":"Long text","displayName":"etcd","installModes":[{"type":"OwnNamespace","supported":true},{"type":"SingleNamespace","supported":true},{"type":"MultiNamespace","supported":false},{"type":"AllNamespaces","supported":true}],"keywords":["etcd","key value"],"labels":{"operatorframework.io/arch.amd64":"supported"},"links":[{"name":"Blog","url":"https://coreos.com/etcd"}],"maintainers":[{"name":"etcd Community","email":"etcd-dev@googlegroups.com"}],"maturity":"alpha","minKubeVersion":"1.21.0","nativeAPIs":[{"group":"","version":"v1","kind":"Pod"}],"provider":{"name":"CNCF"}}},
			{"type":"olm.constraint","value":{"failureMessage":"require to have \"certified\"","cel":{"rule":"properties.exists(p, p.type == \"certified\")"}}},
			{"type":"olm.constraint","value":{"failureMessage":"Required for Red because...","any":{"constraints":[{"all":{"constraints":[{"package":{"packageName":"blue","versionRange":">=1.0.0"}},{"gvk":{"group":"blues.example.com","version":"v1","kind":"Blue"}}]}},{"not":{"constraints":[{"failureMessage":"no","gvk":{"group":"greens.example.com","version":"v1alpha1","kind":"greens"}}]}},{"none":{"constraints":[]}}]}}},
			{"type":"olm.deprecated","value":{}},
			{"type":"olm.maxOpenShiftVersion","value":"4.12"},
			{"type":"olm.channel","value":{"channelName":"alpha","priority":0}},
			{"type":"example.com/custom","value":[1,"two",null,false]}
		]}`},
	{name: "deprecations", schema: "olm.deprecations",
		blob: `{"schema":"olm.deprecations","package":"etcd","entries":[{"reference":{"schema":"olm.package"},"message":"gone"},{"reference":{"schema":"olm.package","name":""},"message":"gone"},{"reference":{"schema":"olm.channel","name":"alpha"},"message":"use stable"},{"reference":{"schema":"olm.bundle","name":"etcd.v1"},"message":"old"}]}`},
	{name: "other schema is open", schema: "olm.semver",
		blob: `{"schema":"olm.semver","GenerateMajorChannels":true,"Stable":{"Bundles":[{"Image":"x"}]},"entries":[1],"relatedImages":"x"}`},

	// olm.package.
	// CUE reports one conflict of a struct and hides the others; the
	// fields it reported are removed and the rest checked again, so every
	// problem is found in one run.
	{name: "package empty name and an unknown field", schema: "olm.package",
		blob: `{"schema":"olm.package","name":"","defaultChannel":"stable","extra":1}`,
		want: []Violation{{"extra", "field not allowed"}, {"name", `invalid value "" (out of bound !="")`}}},
	{name: "package unknown field", schema: "olm.package",
		blob: `{"schema":"olm.package","name":"etcd","defaultChannel":"stable","extra":1}`,
		want: []Violation{{"extra", "field not allowed"}}},
	{name: "package missing fields", schema: "olm.package",
		blob: `{"schema":"olm.package"}`,
		want: []Violation{{"defaultChannel", `incomplete value !=""`}, {"name", `incomplete value !=""`}}},
	{name: "package icon with type instead of mediatype", schema: "olm.package",
		blob: `{"schema":"olm.package","name":"etcd","defaultChannel":"stable","icon":{"base64data":"","type":"image/png"}}`,
		want: []Violation{{"icon.mediatype", "incomplete value string"}, {"icon.type", "field not allowed"}}},
	{name: "package icon with null data", schema: "olm.package",
		blob: `{"schema":"olm.package","name":"etcd","defaultChannel":"stable","icon":{"base64data":null,"type":"image/png"}}`,
		want: []Violation{{"icon.base64data", "conflicting values string and null (mismatched types string and null)"},
			{"icon.mediatype", "incomplete value string"}, {"icon.type", "field not allowed"}}},
	{name: "package icon without mediatype", schema: "olm.package",
		blob: `{"schema":"olm.package","name":"etcd","defaultChannel":"stable","icon":{"base64data":""}}`,
		want: []Violation{{"icon.mediatype", "incomplete value string"}}},
	{name: "package wrong schema value", schema: "olm.package",
		blob: `{"schema":"olm.pkg","name":"etcd","defaultChannel":"stable"}`,
		want: []Violation{{"schema", `conflicting values "olm.pkg" and "olm.package"`}}},
	{name: "package bad property", schema: "olm.package",
		blob: `{"schema":"olm.package","name":"etcd","defaultChannel":"stable","properties":[{"type":"a","value":1},{"type":"","value":1}]}`,
		want: []Violation{{"properties[1].type", `invalid value "" (out of bound !="")`}}},

	// olm.channel.
	{name: "channel bad entries", schema: "olm.channel",
		blob: `{"schema":"olm.channel","package":"etcd","name":"stable","entries":[{"name":"a"},{"name":"b","replaces":""},{"name":"c","skips":["x",""]},{"name":"d","skipRange":""},{"name":"e","replace":"d"}]}`,
		want: []Violation{
			{"entries[1].replaces", `invalid value "" (out of bound !="")`},
			{"entries[2].skips[1]", `invalid value "" (out of bound !="")`},
			{"entries[3].skipRange", `invalid value "" (out of bound !="")`},
			{"entries[4].replace", "field not allowed"},
		}},
	{name: "channel entry without name", schema: "olm.channel",
		blob: `{"schema":"olm.channel","package":"etcd","name":"stable","entries":[{"replaces":"a"}]}`,
		want: []Violation{{"entries[0].name", `incomplete value !=""`}}},
	{name: "channel entries not a list", schema: "olm.channel",
		blob: `{"schema":"olm.channel","package":"etcd","name":"stable","entries":{"name":"a"}}`,
		want: []Violation{{"entries", `conflicting values [...#ChannelEntry] and {name:"a"} (mismatched types list and struct)`}}},

	// olm.bundle.
	// An open list is concrete for CUE (it defaults to []), so a missing
	// properties list is no violation.
	{name: "bundle missing properties and image", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"etcd","name":"etcd.v1"}`,
		want: []Violation{{"image", `incomplete value !=""`}}},
	{name: "bundle property errors", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"etcd","name":"etcd.v1","image":"i","properties":[
			{"type":"olm.package","value":{"packageName":"etcd","version":""}},
			{"type":"olm.gvk","value":{"group":"g","version":"v1","kind":"K","plural":"ks"}},
			{"type":"olm.package.required","value":{"packageName":"p","version":"1"}},
			{"type":"olm.gvk.required","value":"g/v1/K"},
			{"type":"x","value":null},
			{"type":"olm.bundle.object","value":{"data":"eA==","ref":"x"}}
		]}`,
		want: []Violation{
			{"properties[0].value.version", `invalid value "" (out of bound !="")`},
			{"properties[1].value.plural", "field not allowed"},
			{"properties[2].value.version", "field not allowed"},
			{"properties[2].value.versionRange", `incomplete value !=""`},
			{"properties[3].value", `conflicting values "g/v1/K" and {group:(string & !=""),version:(string & !=""),kind:(string & !="")} (mismatched types string and struct)`},
			{"properties[4].value", "conflicting values null and !=null (mismatched types null and (bool|string|bytes|func|list|struct|number))"},
			{"properties[5].value", "2 errors in empty disjunction:"},
			{"properties[5].value.data", "field not allowed"},
			{"properties[5].value.ref", "field not allowed"},
		}},
	{name: "bundle incomplete property beside other errors", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"etcd","name":"etcd.v1","image":"i","properties":[{"type":"olm.package","value":{"packageName":"etcd"}},{"type":"","value":1}]}`,
		want: []Violation{{"properties[0].value.version", `incomplete value !=""`}, {"properties[1].type", `invalid value "" (out of bound !="")`}}},
	{name: "bundle incomplete properties", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"etcd","name":"etcd.v1","image":"i","properties":[{"type":"olm.package","value":{"packageName":"etcd"}},{"type":"x"},{"type":"olm.bundle.object","value":{}}]}`,
		want: []Violation{
			{"properties[0].value.version", `incomplete value !=""`},
			{"properties[1].value", "incomplete value !=null"},
			{"properties[2].value", "incomplete value {data!:string} | {ref!:string}"},
		}},
	{name: "bundle unknown field beside a property error", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"etcd","name":"etcd.v1","image":"i","extra":true,"properties":[{"type":"olm.gvk","value":{"group":"","version":"v1","kind":"K"}}]}`,
		want: []Violation{{"extra", "field not allowed"}, {"properties[0].value.group", `invalid value "" (out of bound !="")`}}},
	{name: "bundle unknown field with property closedness error", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"etcd","name":"etcd.v1","image":"i","extra":true,"properties":[{"type":"olm.gvk","value":{"group":"g","version":"v1","kind":"K","x":1}}]}`,
		want: []Violation{{"extra", "field not allowed"}, {"properties[0].value.x", "field not allowed"}}},
	{name: "bundle related images", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"etcd","name":"etcd.v1","image":"i","properties":[],"relatedImages":[{"image":"a"},{"image":""},{"name":"x"},{"image":"b","digest":"sha256:0"}]}`,
		// Related images are open: digest is no violation.
		want: []Violation{{"relatedImages[1].image", `invalid value "" (out of bound !="")`}, {"relatedImages[2].image", `incomplete value !=""`}}},
	{name: "csv metadata errors", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"etcd","name":"etcd.v1","image":"i","properties":[{"type":"olm.csv.metadata","value":{"annotations":{"a/b":"x","replicas":3},"installModes":[{"type":"OwnNamespace","supported":true},{"type":"EveryNamespace","supported":true}],"keywords":["a",1],"crdDescriptions":{"owned":[{"name":"a","version":"v1","kind":"A","specDescriptors":[{"path":"x","x-descriptors":"y"}]}]}}}]}`,
		want: []Violation{
			{`properties[0].value.annotations.replicas`, "conflicting values 3 and string (mismatched types int and string)"},
			{`properties[0].value.crdDescriptions.owned[0].specDescriptors[0]."x-descriptors"`, `conflicting values "y" and [...string] (mismatched types string and list)`},
			{"properties[0].value.installModes[1].type", "4 errors in empty disjunction:"},
			{"properties[0].value.installModes[1].type", `conflicting values "AllNamespaces" and "EveryNamespace"`},
			{"properties[0].value.installModes[1].type", `conflicting values "MultiNamespace" and "EveryNamespace"`},
			{"properties[0].value.installModes[1].type", `conflicting values "OwnNamespace" and "EveryNamespace"`},
			{"properties[0].value.installModes[1].type", `conflicting values "SingleNamespace" and "EveryNamespace"`},
			{"properties[0].value.keywords[1]", "conflicting values 1 and string (mismatched types int and string)"},
		}},
	{name: "csv metadata unknown field", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"etcd","name":"etcd.v1","image":"i","properties":[{"type":"olm.csv.metadata","value":{"displayName":"x","icon":[]}}]}`,
		want: []Violation{{"properties[0].value.icon", "field not allowed"}}},
	// The documentation's example writes package constraints with name;
	// OLM's parser (pkg/constraints, unknown fields disallowed) wants
	// packageName.
	{name: "constraint errors", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"etcd","name":"etcd.v1","image":"i","properties":[
			{"type":"olm.constraint","value":{"gvk":{"group":"g","version":"v","kind":"k"},"cel":{"rule":"true"}}},
			{"type":"olm.constraint","value":{"failureMessage":"x"}},
			{"type":"olm.constraint","value":{"package":{"name":"blue","versionRange":">=1.0.0"}}}
		]}`,
		want: []Violation{
			{"properties[0].value", "2 errors in empty disjunction:"},
			{"properties[0].value.cel", "field not allowed"},
			{"properties[0].value.gvk", "field not allowed"},
			{"properties[1].value", `incomplete value {failureMessage:"x",gvk!:~(#GVKValue)} | {failureMessage:"x",package!:~(#PackageRequiredValue)} | {failureMessage:"x",cel!:{rule:string}} | {failureMessage:"x",all!:~(#CompoundConstraint)} | {failureM…`},
			{"properties[2].value", "2 errors in empty disjunction:"},
			{"properties[2].value.package", "field not allowed"},
			{"properties[2].value.package.name", "field not allowed"},
		}},
	{name: "constraint nested error", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"etcd","name":"etcd.v1","image":"i","properties":[{"type":"olm.constraint","value":{"all":{"constraints":[{"cel":{"rule":"x"}},{"cel":{}}]}}}]}`,
		want: []Violation{{"properties[0].value.all.constraints[1].cel.rule", "incomplete value string"}}},

	// olm.deprecations.
	{name: "deprecations errors", schema: "olm.deprecations",
		blob: `{"schema":"olm.deprecations","package":"etcd","entries":[{"reference":{"schema":"olm.package","name":"etcd"},"message":"m"},{"reference":{"schema":"olm.channel"},"message":"m"},{"reference":{"schema":"olm.bundle","name":""},"message":"m"},{"reference":{"schema":"olm.bundle","name":"b"},"message":""},{"reference":{"schema":"olm.image","name":"b"},"message":"m"}]}`,
		want: []Violation{
			{"entries[0].reference.name", `conflicting values "" and "etcd"`},
			{"entries[1].reference.name", "field is required but not present"},
			{"entries[2].reference.name", `invalid value "" (out of bound !="")`},
			{"entries[3].message", `invalid value "" (out of bound !="")`},
			{"entries[4].reference.schema", "3 errors in empty disjunction:"},
			{"entries[4].reference.schema", `conflicting values "olm.bundle" and "olm.image"`},
			{"entries[4].reference.schema", `conflicting values "olm.channel" and "olm.image"`},
			{"entries[4].reference.schema", `conflicting values "olm.package" and "olm.image"`},
		}},
	{name: "deprecations missing", schema: "olm.deprecations",
		blob: `{"schema":"olm.deprecations","package":"etcd","entries":[{"reference":{"schema":"olm.channel"},"message":"m"},{"reference":{"schema":"olm.bundle","name":"b"}}]}`,
		want: []Violation{
			{"entries[0].reference.name", "field is required but not present"},
			{"entries[1].message", `incomplete value !=""`},
		}},
	{name: "deprecations properties not allowed", schema: "olm.deprecations",
		blob: `{"schema":"olm.deprecations","package":"etcd","entries":[],"properties":[]}`,
		want: []Violation{{"properties", "field not allowed"}}},

	// Other schemas: _Meta only.
	{name: "other schema key case", schema: "olm.semver",
		blob: `{"Schema":"olm.semver"}`,
		want: []Violation{{"schema", `incomplete value !=""`}}},
	// The property's missing fields are incomplete errors, which CUE does
	// not report next to the evaluation errors of the top level.
	{name: "other schema errors", schema: "x",
		blob: `{"schema":"","package":"","properties":[{"type":"olm.gvk","value":{}}]}`,
		want: []Violation{
			{"package", `invalid value "" (out of bound !="")`},
			{"properties[0].value.group", `incomplete value !=""`},
			{"properties[0].value.kind", `incomplete value !=""`},
			{"properties[0].value.version", `incomplete value !=""`},
			{"schema", `invalid value "" (out of bound !="")`},
		}},
	{name: "other properties not a list", schema: "x",
		blob: `{"schema":"x","properties":{"type":"a"}}`,
		want: []Violation{{"properties", `conflicting values [...#Property] and {type:"a"} (mismatched types list and struct)`}}},
	{name: "long string in message", schema: "olm.bundle",
		blob: `{"schema":"olm.bundle","package":"etcd","name":"etcd.v1","image":"i","properties":[{"type":"olm.gvk","value":"` + strings.Repeat("QUJD", 1000) + `"}]}`,
		want: []Violation{{"properties[0].value", `conflicting values ` + (`"` + strings.Repeat("QUJD", 1000))[:200] + `… and {group:(string & !=""),version:(string & !=""),kind:(string & !="")} (mismatched types string and struct)`}}},
	{name: "not an object", schema: "x",
		blob: `[1,2]`,
		want: []Violation{{"", `conflicting values {schema:(string & !=""),package?:(string & !=""),properties?:[...#Property]} and [1,2] (mismatched types struct and list)`}}},
}
