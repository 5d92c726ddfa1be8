//! Approver roles: the team lead of a subject's team, or a role the Config
//! names, and who acts in each.
//!
//! `team-lead` and `receiving-team-lead` are the roles capops fills itself:
//! from the `leads` of the subject's Team (as the judging revision has it;
//! for a request, the team that holds it in the base) and, for a request
//! handed to another team, of the team that receives it, and from nothing
//! else: a Config that defines either name is refused (`role-reserved`), and
//! one that got past validation still adds nobody to them, so no Config entry
//! makes someone a lead of every team, or of a team the base does not have.
//! Every other role is what the Config's `spec.roles` says.

use crate::model::ConfigSpec;
use std::fmt;

/// The name of the team-lead role in policies and the Config.
pub const TEAM_LEAD: &str = crate::model::config::LEAD_ROLES[0];
/// The leads of the team a request is handed to.
pub const RECEIVING_TEAM_LEAD: &str = crate::model::config::LEAD_ROLES[1];

/// A role an approval is asked from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// The leads of the subject's team.
    TeamLead,
    /// The leads of the team a request is handed to.
    ReceivingTeamLead,
    /// A role of the Config's `spec.roles`.
    Named(String),
}

impl Role {
    pub fn parse(name: &str) -> Role {
        if name == TEAM_LEAD {
            Role::TeamLead
        } else if name == RECEIVING_TEAM_LEAD {
            Role::ReceivingTeamLead
        } else {
            Role::Named(name.to_string())
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Role::TeamLead => TEAM_LEAD,
            Role::ReceivingTeamLead => RECEIVING_TEAM_LEAD,
            Role::Named(n) => n,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The role names a policy may use with a Config: its roles, `team-lead`
/// and `receiving-team-lead`.
pub fn defined(config: &ConfigSpec) -> Vec<&str> {
    config
        .roles
        .keys()
        .map(|k| k.value.as_str())
        .chain([TEAM_LEAD, RECEIVING_TEAM_LEAD])
        .collect()
}

/// Who acts in each role, for one subject.
pub struct Members<'a> {
    pub config: &'a ConfigSpec,
    /// The subject's team leads (the `team-lead` role), when it has a team.
    pub team_leads: Vec<String>,
    /// The leads of the team a request is handed to (`receiving-team-lead`).
    pub receiving_leads: Vec<String>,
}

impl Members<'_> {
    /// The GitHub teams (`org/slug`) and users (logins, without `@`) of a role.
    pub fn of(&self, role: &Role) -> (Vec<String>, Vec<String>) {
        let mut teams = Vec::new();
        let mut users = Vec::new();
        let leads = match role {
            Role::TeamLead => &self.team_leads,
            Role::ReceivingTeamLead => &self.receiving_leads,
            Role::Named(name) => return self.named(name),
        };
        for lead in leads {
            if lead.contains('/') {
                teams.push(lead.clone());
            } else {
                users.push(lead.trim_start_matches('@').to_string());
            }
        }
        (teams, users)
    }

    /// The GitHub teams and users the Config gives a role of its own.
    fn named(&self, name: &str) -> (Vec<String>, Vec<String>) {
        let mut teams = Vec::new();
        let mut users = Vec::new();
        if let Some((_, r)) = self.config.roles.iter().find(|(k, _)| k.value == name) {
            teams.extend(r.teams.iter().map(|t| t.value.clone()));
            users.extend(
                r.users
                    .iter()
                    .map(|u| u.value.trim_start_matches('@').to_string()),
            );
        }
        (teams, users)
    }

    /// Whether anyone can act in a role (the lead roles count as filled:
    /// their members depend on the subject).
    pub fn is_empty_role(config: &ConfigSpec, role: &Role) -> bool {
        if matches!(role, Role::TeamLead | Role::ReceivingTeamLead) {
            return false;
        }
        config
            .roles
            .iter()
            .find(|(k, _)| k.value == role.as_str())
            .is_none_or(|(_, r)| r.teams.is_empty() && r.users.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_entry_named_like_a_lead_role_adds_nobody_to_it() {
        use crate::model::{Spanned, config::Role as Held};
        let s = |v: &str| Spanned::new(v.to_string(), Default::default());
        let held = |teams: &[&str], users: &[&str]| Held {
            description: None,
            teams: teams.iter().map(|t| s(t)).collect(),
            users: users.iter().map(|u| s(u)).collect(),
        };
        let mut config = ConfigSpec::default();
        config.roles.insert(s(TEAM_LEAD), held(&[], &["mallory"]));
        config
            .roles
            .insert(s(RECEIVING_TEAM_LEAD), held(&["acme/all"], &[]));
        config.roles.insert(s("director"), held(&[], &["dana"]));
        let members = Members {
            config: &config,
            team_leads: vec!["alice".into(), "acme/ml".into()],
            receiving_leads: Vec::new(),
        };
        assert_eq!(
            members.of(&Role::TeamLead),
            (vec!["acme/ml".to_string()], vec!["alice".to_string()])
        );
        assert_eq!(members.of(&Role::ReceivingTeamLead), (vec![], vec![]));
        assert_eq!(
            members.of(&Role::parse("director")),
            (vec![], vec!["dana".to_string()])
        );
    }
}
