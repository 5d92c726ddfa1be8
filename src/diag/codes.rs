//! The table of diagnostic codes.
//!
//! A code is a stable kebab-case name that users can search for, silence or
//! raise in the Config, and that tools can match in JSON and SARIF output.
//! Codes are never renamed; `docs/codes.md` documents each one (a test keeps
//! the two in step).

use super::Severity;

macro_rules! codes {
    ($($variant:ident = $name:literal, $sev:ident, $title:literal;)*) => {
        /// A stable diagnostic code.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code { $($variant),* }

        impl Code {
            /// Every code, in documentation order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The kebab-case name.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $name),* }
            }

            /// The severity used unless the Config overrides it.
            pub fn default_severity(self) -> Severity {
                match self { $(Code::$variant => Severity::$sev),* }
            }

            /// A one-line description (SARIF rule text, `docs/codes.md` headings).
            pub fn title(self) -> &'static str {
                match self { $(Code::$variant => $title),* }
            }

            /// Whether the Config may change this code's severity. Problems that
            /// stop a file or document from being read cannot be lowered.
            pub fn overridable(self) -> bool {
                !matches!(
                    self,
                    Code::NoConfig | Code::FileUnreadable | Code::FileTooLarge | Code::FileNotUtf8
                        | Code::PathNotUtf8
                        | Code::FileBinary | Code::YamlSyntax | Code::YamlDuplicateKey
                        | Code::YamlAliasLimit | Code::YamlTooDeep | Code::YamlTooLarge
                        | Code::YamlIntegerOverflow | Code::DocumentNotMapping
                        | Code::MissingApiVersion | Code::UnknownApiVersion | Code::MissingKind
                        | Code::UnknownKind | Code::UnknownField | Code::MissingField
                        | Code::WrongType | Code::ValueOutOfRange | Code::InvalidValue
                        | Code::InvalidDate | Code::ProblemsNotShown | Code::DuplicateName
                        | Code::ConfigMisplaced | Code::RoleReserved
                )
            }

            /// Whether the Config may lower this code's severity: not one of
            /// [`Code::overridable`]'s, nor a reference to a team, cluster,
            /// pool or priority class that does not exist (a request there
            /// would be judged, and its namespace's quota rendered, as if it
            /// were real), nor an invariant `check` and `render` keep
            /// ([`Code::invariant`]).
            pub fn lowerable(self) -> bool {
                self.overridable()
                    && !self.invariant()
                    && !matches!(
                        self,
                        Code::UnknownTeam | Code::UnknownCluster | Code::UnknownPool
                            | Code::UnknownPriorityClass
                    )
            }

            /// A state `check` and `render` refuse whatever the Config says:
            /// a team over its quota, a pool committed past what it has, a
            /// window still to run shorter than the hour capacity is counted
            /// in, two teams rendered into one namespace.
            pub fn invariant(self) -> bool {
                matches!(
                    self,
                    Code::TeamOverQuota | Code::PoolOvercommitted | Code::WindowTooShort
                        | Code::DuplicateNamespace
                )
            }

            pub fn parse(name: &str) -> Option<Code> {
                match name { $($name => Some(Code::$variant),)* _ => None }
            }
        }
    };
}

codes! {
    // Files and the repository
    NoConfig = "no-config", Error, "the folder has no capops.yaml, so it is not a capacity repository";
    FileUnreadable = "file-unreadable", Error, "a file could not be read";
    FileTooLarge = "file-too-large", Error, "a file is larger than the size limit";
    FileNotUtf8 = "file-not-utf8", Error, "a file is not valid UTF-8 text";
    PathNotUtf8 = "path-not-utf8", Error, "a file's name is not valid UTF-8";
    FileBinary = "file-binary", Error, "a file holds binary data";
    FileEmpty = "file-empty", Warning, "a YAML file holds no documents";
    SymlinkLoop = "symlink-loop", Warning, "a symbolic link points back into its own folder and was skipped";
    SymlinkNotFollowed = "symlink-not-followed", Warning, "a symbolic link in the repository was not followed, so what it points to was not read";
    SubmoduleNotRead = "submodule-not-read", Warning, "a folder is a git submodule or a nested repository, which capops does not read";
    // YAML
    YamlSyntax = "yaml-syntax", Error, "the file is not valid YAML";
    YamlDuplicateKey = "yaml-duplicate-key", Error, "a mapping has the same key twice";
    YamlAliasLimit = "yaml-alias-limit", Error, "aliases expand beyond the limit (an alias bomb)";
    YamlTooDeep = "yaml-too-deep", Error, "values are nested deeper than the limit";
    YamlTooLarge = "yaml-too-large", Error, "a file holds more YAML nodes or documents than the limit";
    YamlIntegerOverflow = "yaml-integer-overflow", Error, "an integer is too large to represent";
    DocumentEmpty = "document-empty", Warning, "a YAML document is empty";
    // Document envelope
    DocumentNotMapping = "document-not-mapping", Error, "a document is not a mapping";
    MissingApiVersion = "missing-api-version", Error, "a document has no apiVersion";
    UnknownApiVersion = "unknown-api-version", Error, "a document's apiVersion is not one capops reads";
    MissingKind = "missing-kind", Error, "a document has no kind";
    UnknownKind = "unknown-kind", Error, "a document's kind is not one capops knows";
    // Shape (JSON Schema)
    UnknownField = "unknown-field", Error, "a field is not part of the document's schema";
    MissingField = "missing-field", Error, "a required field is missing";
    WrongType = "wrong-type", Error, "a value has the wrong type";
    ValueOutOfRange = "value-out-of-range", Error, "a number is outside its allowed range";
    InvalidValue = "invalid-value", Error, "a value is not one of the allowed values or does not match the allowed form";
    InvalidDate = "invalid-date", Error, "a date or time does not exist or is not written as ISO 8601";
    ProblemsNotShown = "problems-not-shown", Error, "a file has more problems with its documents' shape, or a usage file with its rows, than capops describes";
    // Repository-wide meaning
    DuplicateName = "duplicate-name", Error, "two documents of the same kind have the same name";
    ConfigMisplaced = "config-misplaced", Error, "the Config document is not in capops.yaml, or there is more than one";
    UnknownTeam = "unknown-team", Error, "a reference names a Team that does not exist";
    UnknownCluster = "unknown-cluster", Error, "a reference names a Cluster that does not exist";
    UnknownPool = "unknown-pool", Error, "a reference names a node pool the cluster does not have";
    UnknownPriorityClass = "unknown-priority-class", Error, "a reference names a PriorityClass that does not exist";
    UnknownRole = "unknown-role", Error, "an approval names a role the Config does not define";
    PrometheusUrlInvalid = "prometheus-url-invalid", Error, "a Prometheus URL carries credentials, a query or a fragment, or is not http(s)";
    WindowInverted = "window-inverted", Error, "a time window ends before or when it starts";
    WindowTooShort = "window-too-short", Error, "a window or term is shorter than an hour, the unit capacity is held, counted and billed in";
    InvalidResourceName = "invalid-resource-name", Error, "a resource name is not one capops can quota";
    ResourceNotInPool = "resource-not-in-pool", Error, "a request asks for a resource its pool does not provide";
    TeamNotInCluster = "team-not-in-cluster", Error, "a request's team has no namespace in the request's cluster";
    PurchaseMixMismatch = "purchase-mix-mismatch", Error, "a pool's reserved, on-demand and spot nodes do not add up to its node count, or its nodeLabels or taints mark spot capacity its mix does not state";
    InvalidNamespace = "invalid-namespace", Error, "a namespace is not a valid DNS label, or is reserved (kube-*, the GPU operator's)";
    DuplicateNamespace = "duplicate-namespace", Error, "two teams use the same namespace in one cluster";
    DuplicateResource = "duplicate-resource", Error, "a team's quota, borrowing or lending limits in one cluster name the same resource twice, under two spellings";
    RenderedFileClash = "rendered-file-clash", Error, "two objects capops renders for one cluster would be written to the same file";
    NameInvalid = "name-invalid", Error, "a name that becomes a file path or an object name is not one the cluster, cloud or file system accepts";
    ApproverInvalid = "approver-invalid", Error, "a lead or approver is not a GitHub login or an `org/team` slug";
    UsagePullerShared = "usage-puller-shared", Warning, "the Config lists `github-actions[bot]` as a usage puller, an account every workflow of the repository opens pull requests as";
    TeamOverQuota = "team-over-quota", Error, "the requests in force commit more to a team than its quota, at some hour from now on";
    PoolOvercommitted = "pool-overcommitted", Error, "the requests in force commit more of a pool than it has, at some hour from now on";
    // GPUs and MIG
    UnknownGpuModel = "unknown-gpu-model", Error, "a pool names a GPU model the catalog does not know";
    MigNotSupported = "mig-not-supported", Error, "a MIG layout is given for a GPU without MIG";
    MigUnknownProfile = "mig-unknown-profile", Error, "a MIG profile does not exist on the pool's GPU";
    MigLayoutDoesNotFit = "mig-layout-does-not-fit", Error, "a MIG layout cannot be placed on one GPU";
    MigSingleStrategyMixed = "mig-single-strategy-mixed", Error, "a pool under the single MIG strategy uses more than one profile";
    MigProfileSpelling = "mig-profile-spelling", Error, "a MIG profile is not written as the device plugin names it, or a layout names one profile twice";
    MigLayoutEmpty = "mig-layout-empty", Error, "a MIG layout lists no profile";
    MigProfileAlias = "mig-profile-alias", Note, "a MIG profile is written with a driver-specific alias of its name";
    MigPlacementInferred = "mig-placement-inferred", Note, "the placement rules for this GPU are inferred, not observed on hardware";
    // Priority classes
    PriorityValueOutOfRange = "priority-value-out-of-range", Error, "a priority value is outside what Kubernetes allows for user classes";
    PriorityReservedPrefix = "priority-reserved-prefix", Error, "a priority class name starts with the reserved `system-` prefix";
    MultipleGlobalDefault = "multiple-global-default", Error, "more than one priority class is the global default";
    // Reservations and prices
    ReservationPoolMismatch = "reservation-pool-mismatch", Warning, "a reservation's provider, region, zone or instance type differs from the pool it covers";
    PriceGpusMismatch = "price-gpus-mismatch", Error, "a price entry's GPUs per instance differ from the GPUs per node of a pool of that instance type";
    PriceRegionAmbiguous = "price-region-ambiguous", Warning, "a pool of a cluster without a region is priced by the first of entries in several regions";
    DuplicatePrice = "duplicate-price", Error, "two price entries are for the same provider, region and instance type";
    SpotPriceMissing = "spot-price-missing", Warning, "a pool has spot nodes but its price entry has no spot price: they are costed at on demand";
    // Usage history
    UsageBadHeader = "usage-bad-header", Error, "a usage CSV file does not have the expected columns";
    UsageBadRow = "usage-bad-row", Error, "a usage CSV row has a malformed timestamp or number";
    UsageUnknownReference = "usage-unknown-reference", Warning, "a usage row names a cluster, pool or team that does not exist";
    UsageUsedExceedsAllocated = "usage-used-exceeds-allocated", Warning, "a usage row reports more GPUs used than allocated";
    UsageConflictingRows = "usage-conflicting-rows", Error, "one series has two different rows for the same hour";
    UsageExceedsCapacity = "usage-exceeds-capacity", Error, "a usage row reports more GPUs than its pool has";
    UsageStale = "usage-stale", Warning, "a cluster's usage history ends longer ago than the Config's staleAfterHours";
    UsageHistoryRewritten = "usage-history-rewritten", Warning, "a change alters or removes usage rows the base revision committed";
    // Approval policy
    PolicySyntax = "policy-syntax", Error, "a policy condition or message is not a valid minijinja expression or template";
    PolicyUnknownFact = "policy-unknown-fact", Error, "a policy condition or message reads a fact that does not exist";
    PolicyEvalError = "policy-eval-error", Error, "a policy condition or message failed when evaluated";
    PolicyTimeout = "policy-timeout", Error, "a policy condition or message ran past its time (10 s per subject, or CAPOPS_POLICY_SECONDS, and 30 times that for a whole run); the command stops with exit code 2";
    PolicyTypeError = "policy-type-error", Error, "a policy condition compares or multiplies values of kinds that do not go together";
    PolicyNoTiers = "policy-no-tiers", Error, "the repository's approval policy defines no tiers";
    PolicyTiersConflict = "policy-tiers-conflict", Error, "more than one ApprovalPolicy defines tiers";
    PolicyUnknownTier = "policy-unknown-tier", Error, "a rule escalates to a tier the policy does not define";
    PolicyNoTierMatched = "policy-no-tier-matched", Error, "no tier of the policy matches a request";
    RoleWithoutMembers = "role-without-members", Warning, "the policy asks for approvals from a role nobody holds";
    RoleReserved = "role-reserved", Error, "the Config defines `team-lead` or `receiving-team-lead`, the roles capops fills from each Team's leads";
    // Cloud provider rules for reservations
    CapacityBlockDuration = "capacity-block-duration", Error, "an AWS capacity block's term is not a duration AWS sells";
    CapacityBlockSize = "capacity-block-size", Error, "AWS capacity blocks exceed 64 instances each or 256 at once";
    CapacityBlockEndTime = "capacity-block-end-time", Warning, "an AWS capacity block's term does not end at 11:30 UTC, when every block ends";
    ReservationsExceedReservedNodes = "reservations-exceed-reserved-nodes", Warning, "the reservations covering a pool hold more instances than it declares reserved";
    ReservationZoneRequired = "reservation-zone-required", Error, "a reservation type that holds capacity in one zone names no zone";
    ReservationNameInvalid = "reservation-name-invalid", Error, "a reservation's name breaks the cloud's naming rules";
    CommitmentTermMismatch = "commitment-term-mismatch", Error, "a GCP commitment's term is not the length of its plan (one or three years)";
    GcpCommitmentUnsupported = "gcp-commitment-unsupported", Error, "a GCP commitment's machine type is not one capops can commit, or carries GPUs other than its pool's";
    // Rendering
    TemplateError = "template-error", Error, "a rendering template is unknown, does not compile, or failed when run";
    TemplateOutputInvalid = "template-output-invalid", Error, "a template's output is not one valid object of the expected kind";
    TemplateChangesGoverned = "template-changes-governed", Error, "a template override changes a field the documents govern (a quota, a name, a priority, a Terraform argument)";
    QuotaKeyNotEnforced = "quota-key-not-enforced", Error, "a ResourceQuota key for an extended resource that Kubernetes accepts but never enforces";
    ReservedLabel = "reserved-label", Error, "a rendered object carries a label that Argo CD uses for tracking";
    KueueLimitExceeded = "kueue-limit-exceeded", Error, "a Kueue object would break a limit Kueue's CRD, CEL rules or webhook enforce";
    KueueLendingAboveNominal = "kueue-lending-above-nominal", Warning, "a team's lending limit exceeds its nominal quota in a flavor, so it is lowered to it";
    PoolWithoutNodeLabels = "pool-without-node-labels", Warning, "a pool that needs its nodes selected (Kueue, MIG, time-slicing) has no nodeLabels";
    MoneyThresholdsDefault = "money-thresholds-default", Warning, "a Config in another currency leaves money thresholds at their US dollar defaults";
    // Sync to clusters (plan, apply, drift, verify)
    KubeconfigInvalid = "kubeconfig-invalid", Error, "no usable kubeconfig was found, or it could not be read";
    KubeContextShared = "kube-context-shared", Error, "two Clusters name the same kubeContext or reach one API server";
    KubeContextMissing = "kube-context-missing", Error, "a Cluster's kubeContext is not a context of the kubeconfig";
    ApiServerMismatch = "api-server-mismatch", Error, "a Cluster's kubeContext reaches another API server than its apiServer pins";
    ClusterUnreachable = "cluster-unreachable", Error, "a cluster's API server could not be reached or did not answer in time";
    KueueCrdMissing = "kueue-crd-missing", Error, "a cluster that should run Kueue does not serve Kueue's v1beta2 kinds";
    PruneHeldBack = "prune-held-back", Error, "a prune was held back because a create or update of the same cluster did not land";
    ObjectTerminating = "object-terminating", Error, "an object capops renders is being deleted in the cluster";
    WriteHeldBack = "write-held-back", Error, "a create or update was held back because an object it names did not land";
    NamespaceMissing = "namespace-missing", Error, "a team's namespace does not exist in the cluster";
    ObjectInvalid = "object-invalid", Error, "the cluster refused an object as invalid";
    Forbidden = "forbidden", Error, "the kubeconfig's user may not read or write a kind capops manages";
    ObjectChanged = "object-changed", Error, "an object changed while capops was writing it";
    ApiError = "api-error", Error, "the API server answered a call with an unexpected error";
    FieldConflict = "field-conflict", Warning, "fields capops applies are owned by another field manager";
    ObjectNotOwned = "object-not-owned", Warning, "an object with a name capops renders exists and capops did not create it";
    ObjectUnclaimed = "object-unclaimed", Warning, "an object carries capops's label but names no capacity repository";
    GitopsTracked = "gitops-tracked", Warning, "Argo CD or Flux tracks an object capops renders, so capops leaves it alone";
    OtherCluster = "other-cluster", Warning, "an object this repository applied for another of its Clusters is on this cluster's API server";
    OtherRepository = "other-repository", Warning, "another capacity repository owns an object capops renders";
    NodePoolsShareNodes = "node-pools-share-nodes", Error, "two pools of a cluster can select the same nodes";
    NodePoolsOverlap = "node-pools-overlap", Warning, "a node is selected by pools that want different values of a label";
    RevisionBehindCluster = "revision-behind-cluster", Error, "apply would roll back objects applied from a revision the checkout does not contain";
    PlanStale = "plan-stale", Error, "the cluster changed since the plan file was written";
    MigRolloutFailed = "mig-rollout-failed", Error, "the MIG manager reported a failed reconfiguration of a node";
    MigRolloutTimeout = "mig-rollout-timeout", Error, "a node did not finish its MIG reconfiguration before the wait timed out";
    NodeMismatch = "node-mismatch", Error, "a pool's nodes do not advertise what the pool declares";
    // Configuration of capops itself
    UnknownCode = "unknown-code", Warning, "a severity override names a diagnostic code that does not exist";
    OverrideRefused = "override-refused", Warning, "a severity override tries to lower a problem that stops capops from reading the repository";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_kebab_case_and_parse_back() {
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            let name = code.as_str();
            assert!(seen.insert(name), "duplicate code {name}");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{name} is not kebab-case"
            );
            assert_eq!(Code::parse(name), Some(*code));
        }
    }
}
