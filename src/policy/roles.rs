//! Approver roles: the team lead of a subject's team, or a role the Config
//! names, and who acts in each.
//!
//! `team-lead` and `receiving-team-lead` are the roles capops fills itself:
//! from the `leads` of the subject's Team (as the judging revision has it;
//! for a request, the team that holds it in the base) and, for a request
//! handed to another team, of the team that receives it; plus any teams or
//! users the Config adds under the same names. Every other role is what the
//! Config's `spec.roles` says.

use crate::model::ConfigSpec;
use std::fmt;

/// The name of the team-lead role in policies and the Config.
pub const TEAM_LEAD: &str = "team-lead";
/// The leads of the team a request is handed to.
pub const RECEIVING_TEAM_LEAD: &str = "receiving-team-lead";

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
            Role::TeamLead => &self.team_leads[..],
            Role::ReceivingTeamLead => &self.receiving_leads[..],
            Role::Named(_) => &[],
        };
        {
            for lead in leads {
                if lead.contains('/') {
                    teams.push(lead.clone());
                } else {
                    users.push(lead.trim_start_matches('@').to_string());
                }
            }
        }
        if let Some((_, r)) = self
            .config
            .roles
            .iter()
            .find(|(k, _)| k.value == role.as_str())
        {
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
