//! `capops render`: the example's rendering against committed golden files,
//! every Kubernetes object against the official Kubernetes JSON schemas
//! (strict) and Kueue v1beta2 schemas, Terraform JSON against the providers'
//! argument lists, and the command's behaviour on disk (no diff on a second
//! run, stale files pruned, nothing written on error, git revisions).

mod common;
use capops::render::{self, templates::Templates};
use common::{example, root, run};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const AT: &str = "2026-11-22";

fn render_example() -> render::Rendered {
    let head = capops::pipeline::validate_dir(Path::new(&example())).unwrap();
    assert!(head.is_valid());
    let mut diags = Vec::new();
    let t = Templates::new(&[], &mut diags);
    let opts = render::Options {
        at: AT.parse().unwrap(),
        revision: "golden".into(),
        clusters: None,
    };
    render::render(&head.repo, &t, &opts)
}

/// The rendering of examples/acme is committed under tests/golden/acme;
/// `CAPOPS_BLESS=1 cargo test --test render` rewrites it.
#[test]
fn the_example_renders_as_committed() {
    let r = render_example();
    assert!(!r.has_errors(), "{:?}", r.diagnostics);
    let golden = root().join("tests/golden/acme");
    let rendered: BTreeMap<String, String> =
        r.files.iter().map(|f| (f.path.clone(), f.text())).collect();
    if std::env::var_os("CAPOPS_BLESS").is_some() {
        let _ = std::fs::remove_dir_all(&golden);
        for (p, t) in &rendered {
            let path = golden.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, t).unwrap();
        }
    }
    let mut committed = BTreeMap::new();
    for e in walkdir::WalkDir::new(&golden).into_iter().flatten() {
        if e.file_type().is_file() {
            let rel = e
                .path()
                .strip_prefix(&golden)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            committed.insert(rel, std::fs::read_to_string(e.path()).unwrap());
        }
    }
    let names = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&rendered),
        names(&committed),
        "files differ; run `CAPOPS_BLESS=1 cargo test --test render` and review the diff"
    );
    for (p, t) in &rendered {
        assert_eq!(t, &committed[p], "{p} differs; bless and review the diff");
    }
    // Rendering twice gives the same bytes.
    let again = render_example();
    assert_eq!(
        again.files.iter().map(|f| f.text()).collect::<Vec<_>>(),
        r.files.iter().map(|f| f.text()).collect::<Vec<_>>()
    );
}

/// The folder of kubernetes-validate's strict schemas for Kubernetes 1.37:
/// `CAPOPS_K8S_SCHEMAS`, else the installed Python package, else installed
/// (pinned) into target/ with pip.
fn kubernetes_schemas() -> PathBuf {
    if let Some(p) = std::env::var_os("CAPOPS_K8S_SCHEMAS") {
        return PathBuf::from(p);
    }
    let sub = "kubernetes_validate/kubernetes-json-schema/v1.37.0-local-strict";
    let target = root().join("target/kubernetes-validate");
    if target.join(sub).is_dir() {
        return target.join(sub);
    }
    let found = std::process::Command::new("python3")
        .args([
            "-c",
            "import kubernetes_validate, os; print(os.path.dirname(kubernetes_validate.__file__))",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(p) = found
        && p.join("kubernetes-json-schema/v1.37.0-local-strict")
            .is_dir()
    {
        return p.join("kubernetes-json-schema/v1.37.0-local-strict");
    }
    let status = std::process::Command::new("python3")
        .args(["-m", "pip", "install", "--quiet", "--target"])
        .arg(&target)
        .arg("kubernetes-validate==1.37.0")
        .status();
    assert!(
        status.is_ok_and(|s| s.success()) && target.join(sub).is_dir(),
        "the Kubernetes JSON schemas come from PyPI's kubernetes-validate 1.37.0: install it \
         (`pip install kubernetes-validate==1.37.0`) or set CAPOPS_K8S_SCHEMAS to its \
         kubernetes-json-schema/v1.37.0-local-strict folder"
    );
    target.join(sub)
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

struct Schemas {
    core: BTreeMap<&'static str, jsonschema::Validator>,
    kueue: BTreeMap<&'static str, jsonschema::Validator>,
}

fn schemas() -> Schemas {
    let dir = kubernetes_schemas();
    let registry = jsonschema::Registry::new()
        .add(
            "https://kubernetes.io/api/_definitions.json",
            read_json(&dir.join("_definitions.json")),
        )
        .unwrap()
        .prepare()
        .unwrap();
    let core = [
        ("ResourceQuota", "resourcequota-v1.json"),
        ("PriorityClass", "priorityclass-scheduling-v1.json"),
        ("ConfigMap", "configmap-v1.json"),
    ]
    .into_iter()
    .map(|(k, f)| {
        let v = jsonschema::options()
            .with_registry(&registry)
            .build(&read_json(&dir.join(f)))
            .unwrap();
        (k, v)
    })
    .collect();
    let kdir = root().join("tests/schemas/kueue-v1beta2");
    let kueue = [
        ("ResourceFlavor", "resourceflavor.json"),
        ("ClusterQueue", "clusterqueue.json"),
        ("LocalQueue", "localqueue.json"),
        ("Cohort", "cohort.json"),
        ("WorkloadPriorityClass", "workloadpriorityclass.json"),
    ]
    .into_iter()
    .map(|(k, f)| {
        (
            k,
            jsonschema::validator_for(&read_json(&kdir.join(f))).unwrap(),
        )
    })
    .collect();
    Schemas { core, kueue }
}

fn check_object(s: &Schemas, path: &str, v: &Value) -> Vec<String> {
    let kind = v["kind"].as_str().unwrap_or_default();
    let validator = s.core.get(kind).or_else(|| s.kueue.get(kind));
    match validator {
        None => vec![format!("{path}: no schema for kind {kind}")],
        Some(val) => val
            .iter_errors(v)
            .map(|e| format!("{path}: {} at {}", e, e.instance_path()))
            .collect(),
    }
}

#[test]
fn every_rendered_object_passes_the_kubernetes_and_kueue_schemas() {
    let s = schemas();
    let r = render_example();
    let mut kinds = BTreeMap::new();
    let mut errors = Vec::new();
    for f in r.files.iter().filter(|f| f.kubernetes) {
        // Validate what is written, read back.
        let text = f.text();
        let parsed = capops::load::yaml::parse(&text, capops::diag::FileId(0));
        assert!(parsed.diagnostics.is_empty(), "{}", f.path);
        let v = capops::load::json::to_json(&parsed.documents[0]);
        *kinds
            .entry(v["kind"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
        errors.extend(check_object(&s, &f.path, &v));
    }
    assert!(errors.is_empty(), "{errors:#?}");
    // Every kind capops renders is in the example, so every schema is exercised.
    for k in [
        "ResourceQuota",
        "PriorityClass",
        "ConfigMap",
        "ResourceFlavor",
        "ClusterQueue",
        "LocalQueue",
        "Cohort",
        "WorkloadPriorityClass",
    ] {
        assert!(kinds.contains_key(k), "no {k} rendered: {kinds:?}");
    }
}

#[test]
fn the_schemas_reject_what_they_should() {
    let s = schemas();
    let quota = serde_json::json!({
        "apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": "q", "namespace": "n"},
        "spec": {"hard": {"requests.nvidia.com/gpu": "8"}, "hardd": {}}
    });
    assert!(
        !check_object(&s, "q", &quota).is_empty(),
        "strict: unknown field"
    );
    let cq = serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "t"},
        "spec": {"cohort": "old-v1beta1-field", "namespaceSelector": {}}
    });
    assert!(
        !check_object(&s, "cq", &cq).is_empty(),
        "v1beta1 `cohort` is not v1beta2"
    );
    let flavor = serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "f"},
        "spec": {"nodeLabels": (0..9).map(|i| (format!("k{i}"), Value::from("v"))).collect::<serde_json::Map<_, _>>()}
    });
    assert!(
        !check_object(&s, "rf", &flavor).is_empty(),
        "at most 8 node labels"
    );
}

/// Arguments of each Terraform resource and data source capops writes:
/// (required, optional), from the providers' documentation
/// (terraform-provider-aws, -google, -azurerm).
fn terraform_arguments() -> BTreeMap<&'static str, (Vec<&'static str>, Vec<&'static str>)> {
    BTreeMap::from([
        (
            "aws_ec2_capacity_reservation",
            (
                vec![
                    "availability_zone",
                    "instance_count",
                    "instance_platform",
                    "instance_type",
                ],
                vec![
                    "ebs_optimized",
                    "end_date",
                    "end_date_type",
                    "ephemeral_storage",
                    "instance_match_criteria",
                    "outpost_arn",
                    "placement_group_arn",
                    "tags",
                    "tenancy",
                ],
            ),
        ),
        (
            "aws_ec2_capacity_block_offering",
            (
                vec!["capacity_duration_hours", "instance_count", "instance_type"],
                vec!["start_date_range", "end_date_range"],
            ),
        ),
        (
            "aws_ec2_capacity_block_reservation",
            (
                vec!["capacity_block_offering_id", "instance_platform"],
                vec!["tags", "region"],
            ),
        ),
        (
            "google_compute_reservation",
            (
                vec!["name", "zone", "specific_reservation"],
                vec![
                    "description",
                    "specific_reservation_required",
                    "share_settings",
                    "project",
                ],
            ),
        ),
        (
            "google_compute_region_commitment",
            (
                vec!["name", "plan"],
                vec![
                    "description",
                    "type",
                    "category",
                    "resources",
                    "license_resource",
                    "auto_renew",
                    "existing_reservations",
                    "region",
                    "project",
                ],
            ),
        ),
        (
            "azurerm_capacity_reservation_group",
            (
                vec!["name", "resource_group_name", "location"],
                vec!["zones", "tags"],
            ),
        ),
        (
            "azurerm_capacity_reservation",
            (
                vec!["name", "capacity_reservation_group_id", "sku"],
                vec!["zone", "tags"],
            ),
        ),
    ])
}

fn check_terraform(
    path: &str,
    v: &Value,
    args: &BTreeMap<&str, (Vec<&str>, Vec<&str>)>,
) -> Vec<String> {
    let mut errors = Vec::new();
    for block in ["resource", "data"] {
        let Some(types) = v.get(block).and_then(Value::as_object) else {
            continue;
        };
        for (ty, instances) in types {
            let Some((required, optional)) = args.get(ty.as_str()) else {
                errors.push(format!("{path}: unknown {block} type {ty}"));
                continue;
            };
            for (name, body) in instances.as_object().unwrap() {
                let body = body.as_object().unwrap();
                for r in required {
                    if body.get(*r).is_none_or(Value::is_null) {
                        errors.push(format!("{path}: {ty}.{name} lacks required `{r}`"));
                    }
                }
                for k in body.keys() {
                    // Terraform's meta-arguments are allowed on every block.
                    if ["lifecycle", "depends_on", "count", "for_each", "provider"]
                        .contains(&k.as_str())
                    {
                        continue;
                    }
                    if !required.contains(&k.as_str()) && !optional.contains(&k.as_str()) {
                        errors.push(format!("{path}: {ty}.{name} has unknown argument `{k}`"));
                    }
                }
            }
        }
    }
    for k in v.as_object().unwrap().keys() {
        if ![
            "resource",
            "data",
            "variable",
            "terraform",
            "provider",
            "//",
        ]
        .contains(&k.as_str())
        {
            errors.push(format!("{path}: unexpected top-level block {k}"));
        }
    }
    errors
}

#[test]
fn terraform_json_has_the_providers_arguments_and_no_others() {
    let args = terraform_arguments();
    // The example covers AWS; a repository with every type covers the rest.
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    copy_dir(Path::new(&example()), &repo);
    std::fs::write(
        repo.join("reservations/more.yaml"),
        r#"apiVersion: capops.dev/v1alpha1
kind: Reservation
metadata:
  name: l4-commit
spec:
  provider: gcp
  type: gcp-commitment
  region: us-central1
  zone: us-central1-a
  instanceType: g2-standard-4
  count: 8
  commitmentPlan: 12-month
  term: {start: 2026-12-01, end: 2027-12-01}
  covers: {cluster: infer-l4, pool: l4-serve}
---
apiVersion: capops.dev/v1alpha1
kind: Reservation
metadata:
  name: h100-odcr
spec:
  provider: aws
  type: aws-capacity-reservation
  region: us-east-1
  zone: us-east-1a
  instanceType: p5.48xlarge
  count: 1
  term: {start: 2026-12-01, end: 2027-06-01}
  hourlyPrice: 55.04
  covers: {cluster: prod-h100, pool: h100-serve}
---
apiVersion: capops.dev/v1alpha1
kind: Reservation
metadata:
  name: azure-h100
spec:
  provider: azure
  type: azure-capacity-reservation
  region: eastus
  zone: "1"
  instanceType: Standard_ND96isr_H100_v5
  count: 2
  hourlyPrice: 98.32
  term: {start: 2026-12-01, end: 2027-12-01}
  covers: {cluster: prod-h100, pool: h100-serve}
---
apiVersion: capops.dev/v1alpha1
kind: Reservation
metadata:
  name: t4-commit
spec:
  provider: gcp
  type: gcp-commitment
  region: us-central1
  zone: us-central1-a
  instanceType: n1-standard-8-t4
  count: 4
  commitmentPlan: 12-month
  term: {start: 2026-12-01, end: 2027-12-01}
  covers: {cluster: infer-l4, pool: t4-batch}
"#,
    )
    .unwrap();
    let head = capops::pipeline::validate_dir(&repo).unwrap();
    assert!(
        head.is_valid(),
        "{:?}",
        head.diagnostics
            .iter()
            .filter(|d| d.is_error())
            .collect::<Vec<_>>()
    );
    let mut diags = Vec::new();
    let t = Templates::new(&[], &mut diags);
    let r = render::render(
        &head.repo,
        &t,
        &render::Options {
            // Within every term: capacity reservations and commitments are
            // rendered from the start of their term.
            at: "2026-12-15".parse().unwrap(),
            revision: "r".into(),
            clusters: None,
        },
    );
    let tf: Vec<_> = r
        .files
        .iter()
        .filter(|f| f.path.starts_with("cloud/"))
        .collect();
    let paths: Vec<&str> = tf.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "cloud/aws/us-east-1/h100-odcr.tf.json",
            "cloud/aws/us-east-1/h100-serve-1y.tf.json",
            "cloud/aws/us-east-1/providers.tf.json",
            "cloud/aws/us-east-2/a100-research-6mo.tf.json",
            "cloud/aws/us-east-2/providers.tf.json",
            "cloud/azure/eastus/azure-h100.tf.json",
            "cloud/azure/eastus/providers.tf.json",
            "cloud/azure/eastus/variables.tf.json",
            "cloud/gcp/us-central1/l4-commit.tf.json",
            "cloud/gcp/us-central1/providers.tf.json",
            "cloud/gcp/us-central1/t4-commit.tf.json",
        ]
    );
    // Compute Engine reservations and commitments cannot change in place
    // (a commitment cannot even be deleted): nothing in them moves with the
    // git revision, or every merge would have Terraform replace them.
    let again = render::render(
        &head.repo,
        &t,
        &render::Options {
            at: "2026-12-15".parse().unwrap(),
            revision: "another-revision".into(),
            clusters: None,
        },
    );
    for f in tf.iter().filter(|f| f.path.starts_with("cloud/gcp/")) {
        let other = again.files.iter().find(|g| g.path == f.path).unwrap();
        assert_eq!(f.value, other.value, "{} moves with the revision", f.path);
    }
    // N1 GPUs are attached to the machine, not part of its type: the
    // reservation names Compute Engine's machine type and lists the T4s.
    let t4 = &tf
        .iter()
        .find(|f| f.path == "cloud/gcp/us-central1/t4-commit.tf.json")
        .unwrap()
        .value["resource"]["google_compute_reservation"]["t4_commit"]["specific_reservation"]["instance_properties"];
    assert_eq!(t4["machine_type"], "n1-standard-8");
    assert_eq!(
        t4["guest_accelerators"],
        serde_json::json!([{"accelerator_type": "nvidia-tesla-t4", "accelerator_count": 1}])
    );
    // One root module per provider region: each pins its provider's major
    // version and configures it for the region.
    let providers = |p: &str| &tf.iter().find(|f| f.path == p).unwrap().value;
    let aws = providers("cloud/aws/us-east-2/providers.tf.json");
    assert_eq!(
        aws["terraform"]["required_providers"]["aws"]["source"],
        "hashicorp/aws"
    );
    assert_eq!(
        aws["terraform"]["required_providers"]["aws"]["version"],
        "~> 6.0"
    );
    assert_eq!(aws["provider"]["aws"]["region"], "us-east-2");
    let gcp_p = providers("cloud/gcp/us-central1/providers.tf.json");
    assert_eq!(
        gcp_p["terraform"]["required_providers"]["google"]["version"],
        "~> 7.0"
    );
    assert_eq!(gcp_p["provider"]["google"]["region"], "us-central1");
    let az = providers("cloud/azure/eastus/providers.tf.json");
    assert_eq!(
        az["terraform"]["required_providers"]["azurerm"]["version"],
        "~> 4.0"
    );
    assert!(az["provider"]["azurerm"]["features"].is_object());
    // A capacity block is bought once: a new offering id is ignored, a
    // replacement refused, an offering outside the pool's zone stops the plan.
    let block = &providers("cloud/aws/us-east-2/a100-research-6mo.tf.json")["resource"]["aws_ec2_capacity_block_reservation"]
        ["a100_research_6mo"]["lifecycle"];
    assert_eq!(
        block["ignore_changes"],
        serde_json::json!(["capacity_block_offering_id"])
    );
    assert_eq!(block["prevent_destroy"], true);
    assert_eq!(
        block["precondition"][0]["condition"],
        "${data.aws_ec2_capacity_block_offering.a100_research_6mo.availability_zone == \"us-east-2a\"}"
    );
    let mut errors = Vec::new();
    for f in &tf {
        errors.extend(check_terraform(&f.path, &f.value, &args));
    }
    assert!(errors.is_empty(), "{errors:#?}");
    let block = &tf[3].value;
    assert_eq!(
        block["data"]["aws_ec2_capacity_block_offering"]["a100_research_6mo"]["capacity_duration_hours"],
        182 * 24
    );
    let gcp = &tf[8].value["resource"]["google_compute_region_commitment"]["l4_commit"];
    assert_eq!(gcp["plan"], "TWELVE_MONTH");
    assert_eq!(gcp["resources"][0]["accelerator_type"], "nvidia-l4");
    assert_eq!(gcp["resources"][0]["amount"], "8");
    // The checker itself rejects a missing argument and an unknown one.
    let bad = serde_json::json!({"resource": {"aws_ec2_capacity_reservation": {"x": {"instance_count": 1, "instance_type": "p5", "instance_platform": "Linux/UNIX", "size": 2}}}});
    assert_eq!(check_terraform("bad", &bad, &args).len(), 2);
    // Before their terms start, the capacity reservations and commitments
    // (created and billed on apply, with no start date) are not rendered.
    let before = render::render(
        &head.repo,
        &t,
        &render::Options {
            at: AT.parse().unwrap(),
            revision: "r".into(),
            clusters: None,
        },
    );
    let early: Vec<&str> = before
        .files
        .iter()
        .map(|f| f.path.as_str())
        .filter(|p| p.starts_with("cloud/") && !p.ends_with("/main.tf.json"))
        .collect();
    for name in ["h100-odcr", "azure-h100", "l4-commit"] {
        assert!(
            !early.iter().any(|p| p.contains(name)),
            "{name} rendered before its term: {early:?}"
        );
    }
}

fn copy_dir(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from).into_iter().flatten() {
        let rel = e.path().strip_prefix(from).unwrap();
        let dest = to.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

fn quota(dir: &Path, cluster: &str, ns: &str) -> Value {
    let text =
        std::fs::read_to_string(dir.join(format!("{cluster}/resourcequota-{ns}-capops-gpu.yaml")))
            .unwrap();
    let parsed = capops::load::yaml::parse(&text, capops::diag::FileId(0));
    capops::load::json::to_json(&parsed.documents[0])
}

#[test]
fn quotas_follow_the_requests_in_force_and_stale_files_are_pruned() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    let args = |at: &'static str| {
        [
            "render",
            example().leak(),
            "--at",
            at,
            "--out",
            o.to_string().leak(),
            "--revision",
            "test",
        ]
    };
    let first = run(&args(AT), &[]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(
        first.stdout.contains("49 written, 0 unchanged, 0 removed"),
        "{}",
        first.stdout
    );
    // At 2026-11-22 training holds finetune-baseline (64) and eval-sweep (8).
    let q = quota(&out, "train-a100", "training");
    assert_eq!(q["spec"]["hard"]["requests.nvidia.com/gpu"], "72");
    assert_eq!(
        q["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "capops"
    );
    assert_eq!(
        q["metadata"]["annotations"]["capops.dev/sources"],
        "Team/training,CapacityRequest/training-eval-sweep,CapacityRequest/training-finetune-baseline"
    );
    // A file of someone else's in an owned folder stays.
    std::fs::write(out.join("train-a100/README.md"), "notes").unwrap();
    let again = run(&args(AT), &[]);
    assert!(
        again.stdout.contains("0 written, 49 unchanged, 0 removed"),
        "{}",
        again.stdout
    );
    // On 2027-02-15: foundation-q1 (256) runs, eval-sweep has ended; the
    // interpretability request ended, so research's quota drops.
    let later = run(&args("2027-02-15"), &[]);
    assert_eq!(later.code, 0, "{}", later.stderr);
    let q = quota(&out, "train-a100", "training");
    assert_eq!(q["spec"]["hard"]["requests.nvidia.com/gpu"], "320");
    // 2027-02-15 is past h100-serve-1y and the holiday peak; its Terraform file goes.
    assert!(
        later
            .stdout
            .contains("removed cloud/aws/us-east-1/h100-serve-1y.tf.json"),
        "{}",
        later.stdout
    );
    assert!(
        !out.join("cloud/aws/us-east-1/h100-serve-1y.tf.json")
            .exists()
    );
    assert!(out.join("train-a100/README.md").exists());
}

#[test]
fn a_template_that_writes_limits_keys_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    copy_dir(Path::new(&example()), &repo);
    std::fs::create_dir_all(repo.join("templates/kubernetes")).unwrap();
    std::fs::write(
        repo.join("templates/kubernetes/resourcequota.yaml.j2"),
        r#"apiVersion: v1
kind: ResourceQuota
metadata:
  name: {{ name | json }}
  namespace: {{ namespace | json }}
spec:
  hard:
{%- for key, value in hard | items %}
    {{ key | replace("requests.", "limits.") | json }}: {{ value | string | json }}
{%- endfor %}
"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let r = run(
        &[
            "render",
            repo.to_str().unwrap(),
            "--at",
            AT,
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("quota-key-not-enforced"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("templates/kubernetes/resourcequota.yaml.j2"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("nothing was written"), "{}", r.stderr);
    assert!(!out.exists());
    // A template that breaks out of YAML is an error on the template too.
    std::fs::write(
        repo.join("templates/kubernetes/resourcequota.yaml.j2"),
        "a: [\n",
    )
    .unwrap();
    let r = run(
        &["render", repo.to_str().unwrap(), "--at", AT, "--out", "-"],
        &[],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("template-output-invalid"), "{}", r.stderr);
    assert!(r.stdout.is_empty());
}

#[test]
fn render_streams_filters_by_cluster_and_rejects_bad_arguments() {
    let all = run(
        &[
            "render",
            &example(),
            "--at",
            AT,
            "--out",
            "-",
            "--cluster",
            "prod-h100",
            "--revision",
            "x",
        ],
        &[],
    );
    assert_eq!(all.code, 0, "{}", all.stderr);
    let docs: Vec<&str> = all
        .stdout
        .split("---\n")
        .filter(|d| !d.is_empty())
        .collect();
    assert!(
        docs.iter()
            .all(|d| d.starts_with("# prod-h100/") || d.starts_with("# node-labels/prod-h100")),
        "{}",
        all.stdout
    );
    assert!(all.stdout.contains("kind: ClusterQueue"));
    assert!(!all.stdout.contains("tf.json"));
    let bad = run(&["render", &example(), "--cluster", "prod-h10"], &[]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("did you mean `prod-h100`"),
        "{}",
        bad.stderr
    );
    let fmt = run(&["render", &example(), "--format", "sarif"], &[]);
    assert_eq!(fmt.code, 2);
}

#[test]
fn the_revision_is_the_last_commit_that_changed_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let repo_dir = dir.path().join("capacity");
    copy_dir(Path::new(&example()), &repo_dir);
    let git = git2::Repository::init(&repo_dir).unwrap();
    let commit = |msg: &str| common::commit_all(&git, msg);
    let first = commit("capacity");
    let out = repo_dir.join("rendered");
    let rev = |_: ()| {
        let r = run(
            &[
                "render",
                repo_dir.to_str().unwrap(),
                "--at",
                AT,
                "--format",
                "json",
            ],
            &[],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        v["revision"].as_str().unwrap().to_string()
    };
    assert_eq!(rev(()), first);
    assert!(out.join("prod-h100/clusterqueue-inference.yaml").exists());
    // Committing the rendered output does not change the revision (no render loop).
    commit("rendered");
    assert_eq!(rev(()), first);
    // An uncommitted change to a document marks it dirty.
    let team = repo_dir.join("teams/devex.yaml");
    let text = std::fs::read_to_string(&team).unwrap();
    std::fs::write(&team, text.replace("CC-1400", "CC-1401")).unwrap();
    assert_eq!(rev(()), format!("{first}+dirty"));
    let second = commit("cost center");
    assert_eq!(rev(()), second);
}

/// A driver alias (`7g.79gb` for the A100 80GB's `7g.80gb`) is rendered as
/// written in the MIG config, as it is in resource names: mig-parted matches
/// the name the node's driver reports.
#[test]
fn a_mig_profile_alias_is_rendered_as_written() {
    let repo = root().join("tests/corpus/mig-notes/repo");
    let out = run(
        &[
            "render",
            &repo.display().to_string(),
            "--at",
            AT,
            "--out",
            "-",
            "--cluster",
            "m",
            "--revision",
            "x",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("\"7g.79gb\": 1"), "{}", out.stdout);
    assert!(!out.stdout.contains("7g.80gb"), "{}", out.stdout);
}

/// Pools of the GPUs added to the catalog later (GH200, H20, B300, GB300,
/// RTX PRO 6000, `tests/corpus/mig-new-models` on the minimal base) render
/// their MIG layouts into the mig-parted config as written, label their
/// nodes with them, and quota their mixed-strategy resources under the
/// device plugin's names (`+` as `.`, `-me` kept).
#[test]
fn mig_pools_of_the_new_models_render() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    copy_dir(&root().join("tests/corpus/_base/minimal"), &repo);
    copy_dir(&root().join("tests/corpus/mig-new-models/repo"), &repo);
    let out = dir.path().join("out");
    let r = run(
        &[
            "render",
            repo.to_str().unwrap(),
            "--at",
            AT,
            "--out",
            out.to_str().unwrap(),
            "--cluster",
            "n",
            "--revision",
            "x",
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
    let read = |p: &str| std::fs::read_to_string(out.join(p)).unwrap();
    let mig = read("n/configmap-gpu-operator-capops-mig-parted-config.yaml");
    for config in [
        "capops-1g.12gb-x7:",
        "capops-1g.12gb-x2-1g.24gb-x1-3g.48gb-x1:",
        "capops-3g.72gb-x1-4g.72gb-x1:",
        "capops-3g.135gb-x2:",
        "capops-1g.35gb-x7:",
        "capops-1g.24gb.gfx-x2-2g.48gb-x1:",
        "capops-1g.24gb.me.all-x1-1g.24gb-me-x3:",
    ] {
        assert!(mig.contains(config), "{config} not in\n{mig}");
    }
    for device in [
        "\"1g.12gb\": 7",
        "\"3g.135gb\": 2",
        "\"1g.35gb\": 7",
        "\"1g.24gb+gfx\": 2",
        "\"1g.24gb+me.all\": 1",
        "\"1g.24gb-me\": 3",
    ] {
        assert!(mig.contains(device), "{device} not in\n{mig}");
    }
    let labels = read("node-labels/n.yaml");
    assert!(
        labels.contains("nvidia.com/mig.config: capops-3g.135gb-x2"),
        "{labels}"
    );
    let quota = quota(&out, "n", "edge");
    let hard = quota["spec"]["hard"].as_object().unwrap();
    for key in [
        "requests.nvidia.com/mig-1g.12gb",
        "requests.nvidia.com/mig-3g.135gb",
        "requests.nvidia.com/mig-1g.24gb.gfx",
        "requests.nvidia.com/mig-1g.24gb.me.all",
        "requests.nvidia.com/mig-1g.24gb-me",
    ] {
        assert!(hard.contains_key(key), "{key} not in {hard:?}");
    }
}
