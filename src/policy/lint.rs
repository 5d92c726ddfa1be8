//! Policy lint: approval policies that compile, name roles the Config
//! defines, read only facts that exist, and have unique tier and rule names.
//!
//! Runs with validation on every command (through the pipeline), so a broken
//! policy is reported where it is written, before anything is judged by it.

use crate::diag::{Code, Diagnostic, Span, suggest};
use crate::model::*;
use std::collections::HashMap;

/// Checks every ApprovalPolicy of a repository.
pub fn lint(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    let config = repo.config_spec();
    let roles = super::roles::defined(&config);
    let check_role = |role: &Spanned<String>, diags: &mut Vec<Diagnostic>| {
        if !roles.contains(&role.value.as_str()) {
            diags.push(
                Diagnostic::new(
                    Code::UnknownRole,
                    format!("role `{}` is not defined in the Config", role.value),
                )
                .at(role.span, "unknown role")
                .help(format!(
                    "{}; roles are defined under the Config's `spec.roles`",
                    suggest(&role.value, roles.iter().copied(), "roles")
                )),
            );
        }
    };
    // Conditions and messages compile, and read only facts that exist.
    let env = super::compile::environment(&repo.config_spec().currency);
    let policies: Vec<&Document<PolicySpec>> = repo.policies.values().collect();
    super::compile::compile(&env, &policies, diags);
    // Rule names are unique across the policies: findings, `explain` and
    // approvals name rules, and two of one name could not be told apart.
    let mut rule_names: HashMap<&str, Span> = HashMap::new();
    for policy in repo.policies.values() {
        for rule in &policy.spec.rules {
            if let Some(first) = rule_names.insert(rule.name.value.0.as_str(), rule.name.span) {
                diags.push(
                    Diagnostic::new(
                        Code::DuplicateName,
                        format!("rule `{}` is defined twice", rule.name.value.0),
                    )
                    .at(rule.name.span, "second rule")
                    .related(first, "first rule")
                    .help(
                        "rule names are unique across the approval policies; rename or remove one",
                    ),
                );
            }
        }
    }
    for policy in repo.policies.values() {
        let mut tier_names: HashMap<&str, Span> = HashMap::new();
        for tier in &policy.spec.tiers {
            if let Some(first) = tier_names.insert(tier.name.value.as_str(), tier.name.span) {
                diags.push(
                    Diagnostic::new(
                        Code::DuplicateName,
                        format!(
                            "tier `{}` appears twice in policy `{}`",
                            tier.name.value,
                            policy.name()
                        ),
                    )
                    .at(tier.name.span, "second tier")
                    .related(first, "first tier")
                    .help("tier names are unique within a policy; rename or remove one"),
                );
            }
            for approval in &tier.approvals {
                check_role(&approval.role, diags);
            }
        }
        for rule in &policy.spec.rules {
            match (&rule.role, rule.effect.value) {
                (Some(role), _) => check_role(role, diags),
                (None, Effect::RequireApproval) => diags.push(
                    Diagnostic::new(
                        Code::MissingField,
                        format!(
                            "rule `{}` requires an approval but names no `role`",
                            rule.name.value
                        ),
                    )
                    .at(rule.effect.span, "require-approval needs a role")
                    .help("add `role:` with the role whose approval is required"),
                ),
                (None, _) => {}
            }
        }
    }
}
