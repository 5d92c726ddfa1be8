# capops' default approval tiers and request rules (policies/default.yaml),
# written in Rego for the throughput comparison with regorus
# (benches/policy_eval.rs). Input: one request's facts, as capops builds them.
package capops

import rego.v1

tiers := ["auto", "team-lead", "director", "vp"]

approvals_of := [[], ["team-lead"], ["director", "capacity-review"], ["vp"]]

requires_of := [
	["justification", "window", "successMetrics"],
	["justification", "window", "successMetrics"],
	["justification", "window", "successMetrics"],
	["justification", "window", "successMetrics", "businessCase"],
]

base_tier := 0 if input.request.gpus < 10

else := 1 if input.request.gpus <= 50

else := 2 if input.request.gpus <= 200

else := 3

escalations := 1 if not input.team.within_quota

else := 0

tier := min([base_tier + escalations, 3])

findings contains {"rule": "beyond-quota-goes-up-a-tier", "effect": "escalate", "message": msg} if {
	not input.team.within_quota
	msg := sprintf("%s would hold %v GPUs in %s during this window, %v over its quota: one tier up.", [input.team.name, input.team.peak_gpus, input.request.cluster, input.team.over_quota_gpus])
}

findings contains {"rule": "pool-has-capacity", "effect": "deny", "message": msg} if {
	input.pool.overcommitted
	msg := sprintf("pool %s/%s would be over-committed for %v hours from %s, short of %v GPUs.", [input.request.cluster, input.request.pool, input.pool.overcommit_hours, input.pool.first_overcommit, input.pool.shortfall_gpus])
}

findings contains {"rule": "no-time-slicing-for-production-inference", "effect": "deny", "message": msg} if {
	input.request.workload_class == "inference"
	input.cluster.environment == "production"
	input.pool.time_slicing
	msg := sprintf("production inference cannot run on time-sliced GPUs (%s shares each GPU %v ways): latency and memory are not isolated. Use a whole-GPU or MIG pool.", [input.request.pool, input.pool.replicas])
}

findings contains {"rule": "no-spot-for-production-inference", "effect": "deny", "message": msg} if {
	input.request.workload_class == "inference"
	input.cluster.environment == "production"
	input.pool.spot
	msg := sprintf("production inference cannot run on spot capacity (%s has %v spot nodes that can be reclaimed at any time).", [input.request.pool, input.pool.spot_nodes])
}

findings contains {"rule": "research-is-preemptible", "effect": "deny", "message": "research requests must be preemptible: set `preemptible: true`."} if {
	input.request.workload_class == "research"
	not input.request.preemptible
}

findings contains {"rule": "research-runs-at-low-priority", "effect": "deny", "message": msg} if {
	input.request.workload_class == "research"
	input.request.priority > 1000
	msg := sprintf("research requests run at low priority: %s has priority %v, above 1000.", [input.request.priority_class, input.request.priority])
}

findings contains {"rule": "expensive-requests-need-capacity-review", "effect": "require-approval", "message": msg} if {
	input.request.monthly_cost > input.config.thresholds.monthly_cost_review
	msg := sprintf("%v GPUs in %s/%s cost %v %s a month, above the %v that needs a capacity review.", [input.request.gpus, input.request.cluster, input.request.pool, input.request.monthly_cost, input.config.currency, input.config.thresholds.monthly_cost_review])
}

findings contains {"rule": "low-utilization-teams-asking-for-more", "effect": "warn", "message": msg} if {
	input.team.low_utilization
	asks_for_more
	msg := sprintf("%s used %v of the GPUs allocated to it over the last 30 days; it needs %v GPUs.", [input.team.name, input.team.utilization, input.team.rightsized_gpus])
}

asks_for_more if input.change.delta_gpus > 0

asks_for_more if input.change.kind == "unchanged"

rule_roles := [r | some r in ["capacity-review"]; some f in findings; f.rule == "expensive-requests-need-capacity-review"; not r in approvals_of[tier]]

approvals := array.concat(approvals_of[tier], rule_roles)

present := {
	"justification": input.request.has_justification,
	"window": input.request.has_window,
	"successMetrics": input.request.has_success_metrics,
	"businessCase": input.request.has_business_case,
}

missing := [f | some f in requires_of[tier]; not present[f]]

denied if {
	some f in findings
	f.effect == "deny"
}

outcome := "denied" if denied

else := "approved" if {
	count(approvals) == 0
	count(missing) == 0
}

else := "needs-approval"

decision := {
	"outcome": outcome,
	"tier": tiers[tier],
	"approvals": approvals,
	"missing": missing,
	"rules": sort([f.rule | some f in findings]),
}
