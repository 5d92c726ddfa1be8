//! The approval rules, case by case, without HTTP.

use super::*;

const HEAD: &str = "1111111111111111111111111111111111111111";
const OLD: &str = "0000000000000000000000000000000000000000";

fn review(id: u64, login: &str, state: ReviewState, commit: &str) -> Review {
    Review {
        id,
        login: login.into(),
        bot: false,
        state,
        commit_id: Some(commit.into()),
        submitted_at: Some(format!("2026-11-23T10:{:02}:00Z", id)),
    }
}

fn role(name: &str, count: u32, teams: &[&str], users: &[&str]) -> Approval {
    Approval {
        role: crate::policy::roles::Role::parse(name),
        count,
        teams: teams.iter().map(|s| s.to_string()).collect(),
        users: users.iter().map(|s| s.to_string()).collect(),
        from: format!("tier {name}"),
    }
}

/// org/directors: bob, carol (active), pat (pending); org/review: dave, bob.
fn members(team: &str, login: &str) -> Membership {
    let active: &[(&str, &str)] = &[
        ("org/directors", "bob"),
        ("org/directors", "carol"),
        ("org/directors", "alice"),
        ("org/review", "dave"),
        ("org/review", "bob"),
    ];
    if active.contains(&(team, login)) {
        Membership::Active
    } else if (team, login) == ("org/directors", "pat") {
        Membership::Pending
    } else {
        Membership::NotMember
    }
}

fn logins(r: &RoleStatus) -> Vec<&str> {
    r.approved_by.iter().map(|a| a.login.as_str()).collect()
}

#[test]
fn the_latest_opinion_counts_and_a_comment_does_not_revoke_it() {
    let reviews = [
        review(1, "bob", ReviewState::Approved, HEAD),
        review(2, "bob", ReviewState::Commented, HEAD),
    ];
    let r = reviewers(&reviews, "alice", &[], HEAD);
    assert_eq!(r.approvers.len(), 1);
    assert_eq!(r.approvers[0].login, "bob");
    assert_eq!(r.approvers[0].review_id, 1);
}

#[test]
fn dismissal_and_changes_requested_revoke_an_approval() {
    let reviews = [
        review(1, "bob", ReviewState::Approved, HEAD),
        review(2, "carol", ReviewState::Approved, HEAD),
        review(3, "bob", ReviewState::Dismissed, HEAD),
        review(4, "carol", ReviewState::ChangesRequested, HEAD),
    ];
    let r = reviewers(&reviews, "alice", &[], HEAD);
    assert!(r.approvers.is_empty());
    assert_eq!(
        r.not_counted,
        vec![
            ("bob".to_string(), NotCounted::Dismissed),
            ("carol".to_string(), NotCounted::ChangesRequested)
        ]
    );
}

#[test]
fn an_approval_after_changes_requested_counts() {
    let reviews = [
        review(1, "bob", ReviewState::ChangesRequested, HEAD),
        review(2, "bob", ReviewState::Approved, HEAD),
    ];
    assert_eq!(reviewers(&reviews, "alice", &[], HEAD).approvers.len(), 1);
}

#[test]
fn only_approvals_on_the_head_commit_count() {
    let reviews = [
        review(1, "bob", ReviewState::Approved, OLD),
        review(2, "carol", ReviewState::Approved, HEAD),
        Review {
            commit_id: None,
            ..review(3, "dave", ReviewState::Approved, HEAD)
        },
    ];
    let r = reviewers(&reviews, "alice", &[], HEAD);
    assert_eq!(r.approvers.len(), 1);
    assert_eq!(r.approvers[0].login, "carol");
    assert_eq!(r.approvers[0].commit, HEAD);
    assert!(r.not_counted.contains(&(
        "bob".to_string(),
        NotCounted::StaleCommit { commit: OLD.into() }
    )));
    assert!(r.not_counted.contains(&(
        "dave".to_string(),
        NotCounted::StaleCommit {
            commit: String::new()
        }
    )));
}

#[test]
fn the_author_and_bots_never_approve() {
    let reviews = [
        review(1, "Alice", ReviewState::Approved, HEAD),
        Review {
            bot: true,
            ..review(2, "helper[bot]", ReviewState::Approved, HEAD)
        },
    ];
    let r = reviewers(&reviews, "alice", &[], HEAD);
    assert!(r.approvers.is_empty());
    assert_eq!(r.not_counted[0], ("Alice".to_string(), NotCounted::Author));
    assert_eq!(
        r.not_counted[1],
        ("helper[bot]".to_string(), NotCounted::Bot)
    );
}

#[test]
fn pending_reviews_and_out_of_order_pages_do_not_change_the_verdict() {
    // The dismissal is newer than the approval even if listed first.
    let reviews = [
        review(5, "bob", ReviewState::Dismissed, HEAD),
        review(1, "bob", ReviewState::Approved, HEAD),
        Review {
            submitted_at: None,
            ..review(9, "carol", ReviewState::Pending, HEAD)
        },
    ];
    let r = reviewers(&reviews, "alice", &[], HEAD);
    assert!(r.approvers.is_empty());
    assert_eq!(r.not_counted.len(), 1, "a pending review is no opinion");
}

#[test]
fn a_request_for_changes_whose_time_is_unknown_is_never_overridden() {
    // A hostile or broken answer with no `submitted_at` on a request for
    // changes must not sort it before the approval it follows; a time in
    // another offset is compared as a time, not as text.
    let blocked = [
        review(1, "bob", ReviewState::Approved, HEAD),
        Review {
            submitted_at: None,
            ..review(2, "bob", ReviewState::ChangesRequested, HEAD)
        },
    ];
    let r = reviewers(&blocked, "alice", &[], HEAD);
    assert!(r.approvers.is_empty());
    assert_eq!(r.objectors, ["bob".to_string()]);
    // Nor does an approval whose time is unknown override a dated request
    // for changes: it sorts as the oldest opinion.
    let undated_approval = [
        Review {
            submitted_at: Some("2026-11-23T11:00:00Z".into()),
            ..review(1, "bob", ReviewState::ChangesRequested, HEAD)
        },
        Review {
            submitted_at: None,
            ..review(2, "bob", ReviewState::Approved, HEAD)
        },
    ];
    let r = reviewers(&undated_approval, "alice", &[], HEAD);
    assert!(r.approvers.is_empty());
    assert_eq!(r.objectors, ["bob".to_string()]);
    let offsets = [
        Review {
            submitted_at: Some("2026-11-23T12:30:00+02:00".into()),
            ..review(7, "bob", ReviewState::ChangesRequested, HEAD)
        },
        Review {
            submitted_at: Some("2026-11-23T11:00:00Z".into()),
            ..review(3, "bob", ReviewState::Approved, HEAD)
        },
    ];
    // 12:30+02:00 is 10:30Z: the approval at 11:00Z is the newer opinion.
    let r = reviewers(&offsets, "alice", &[], HEAD);
    assert_eq!(r.approvers.len(), 1);
    assert!(r.objectors.is_empty());
}

#[test]
fn logins_compare_without_case() {
    let reviews = [
        review(1, "Bob", ReviewState::Approved, HEAD),
        review(2, "bob", ReviewState::Dismissed, HEAD),
    ];
    assert!(reviewers(&reviews, "alice", &[], HEAD).approvers.is_empty());
    let r = reviewers(
        &[review(1, "VP-Eng", ReviewState::Approved, HEAD)],
        "x",
        &[],
        HEAD,
    );
    let a = verify(&[role("vp", 1, &[], &["@vp-eng"])], &r, &members);
    assert!(a.satisfied());
}

#[test]
fn a_listed_user_or_an_active_team_member_holds_the_role() {
    let r = reviewers(
        &[
            review(1, "bob", ReviewState::Approved, HEAD),
            review(2, "vp-eng", ReviewState::Approved, HEAD),
        ],
        "alice",
        &[],
        HEAD,
    );
    let a = verify(
        &[
            role("director", 1, &["org/directors"], &[]),
            role("vp", 1, &[], &["vp-eng"]),
        ],
        &r,
        &members,
    );
    assert!(a.satisfied());
    assert_eq!(logins(&a.roles[0]), ["bob"]);
    assert_eq!(logins(&a.roles[1]), ["vp-eng"]);
    assert_eq!(a.roles[0].approved_by[0].commit, HEAD);
}

#[test]
fn a_pending_member_does_not_count_and_says_why() {
    let r = reviewers(
        &[review(1, "pat", ReviewState::Approved, HEAD)],
        "alice",
        &[],
        HEAD,
    );
    let a = verify(
        &[role("director", 1, &["org/directors"], &[])],
        &r,
        &members,
    );
    assert!(!a.satisfied());
    assert_eq!(a.roles[0].missing, 1);
    assert_eq!(
        a.roles[0].uncounted_members,
        vec![(
            "pat".to_string(),
            "pending (not yet accepted) member of org/directors".to_string()
        )]
    );
}

#[test]
fn a_reviewer_outside_the_role_does_not_fill_it() {
    let r = reviewers(
        &[review(1, "mallory", ReviewState::Approved, HEAD)],
        "alice",
        &[],
        HEAD,
    );
    let a = verify(
        &[role("director", 1, &["org/directors"], &[])],
        &r,
        &members,
    );
    assert_eq!(a.missing(), 1);
    assert!(a.roles[0].uncounted_members.is_empty());
}

#[test]
fn two_directors_need_two_different_people() {
    let one = reviewers(
        &[
            review(1, "bob", ReviewState::Approved, HEAD),
            review(2, "bob", ReviewState::Approved, HEAD),
        ],
        "alice",
        &[],
        HEAD,
    );
    let need = [role("director", 2, &["org/directors"], &[])];
    let a = verify(&need, &one, &members);
    assert_eq!(a.roles[0].missing, 1);
    assert_eq!(logins(&a.roles[0]), ["bob"]);
    let two = reviewers(
        &[
            review(1, "bob", ReviewState::Approved, HEAD),
            review(2, "carol", ReviewState::Approved, HEAD),
        ],
        "alice",
        &[],
        HEAD,
    );
    let a = verify(&need, &two, &members);
    assert!(a.satisfied());
    assert_eq!(logins(&a.roles[0]), ["bob", "carol"]);
}

#[test]
fn one_person_fills_one_slot_and_is_put_where_needed() {
    // bob is director and reviewer; dave only reviewer. Greedy in listing
    // order would give bob the director slot and dave the review: fine. With
    // carol absent and dave approving first, bob must still go to director.
    let need = [
        role("capacity-review", 1, &["org/review"], &[]),
        role("director", 1, &["org/directors"], &[]),
    ];
    let r = reviewers(
        &[
            review(1, "bob", ReviewState::Approved, HEAD),
            review(2, "dave", ReviewState::Approved, HEAD),
        ],
        "alice",
        &[],
        HEAD,
    );
    let a = verify(&need, &r, &members);
    assert!(a.satisfied(), "{a:?}");
    assert_eq!(logins(&a.roles[0]), ["dave"]);
    assert_eq!(logins(&a.roles[1]), ["bob"]);
    // bob alone cannot fill both.
    let alone = reviewers(
        &[review(1, "bob", ReviewState::Approved, HEAD)],
        "alice",
        &[],
        HEAD,
    );
    let a = verify(&need, &alone, &members);
    assert_eq!(a.missing(), 1);
}

#[test]
fn the_author_in_the_role_team_cannot_fill_it() {
    // alice is an active director but wrote the pull request.
    let r = reviewers(
        &[review(1, "alice", ReviewState::Approved, HEAD)],
        "alice",
        &[],
        HEAD,
    );
    let a = verify(
        &[role("director", 1, &["org/directors"], &[])],
        &r,
        &members,
    );
    assert_eq!(a.missing(), 1);
}

#[test]
fn a_role_nobody_holds_cannot_be_satisfied_and_huge_counts_stay_bounded() {
    let r = reviewers(
        &[review(1, "bob", ReviewState::Approved, HEAD)],
        "alice",
        &[],
        HEAD,
    );
    let a = verify(&[role("ghost", 1, &[], &[])], &r, &members);
    assert_eq!(a.missing(), 1);
    let a = verify(
        &[role("director", u32::MAX, &["org/directors"], &[])],
        &r,
        &members,
    );
    assert_eq!(a.roles[0].approved_by.len(), 1);
    assert_eq!(a.roles[0].missing, u32::MAX - 1);
}

#[test]
fn unknown_membership_does_not_count() {
    let r = reviewers(
        &[review(1, "bob", ReviewState::Approved, HEAD)],
        "alice",
        &[],
        HEAD,
    );
    let a = verify(
        &[role("director", 1, &["org/directors"], &[])],
        &r,
        &|_, _| Membership::Unknown("GitHub answered 403".into()),
    );
    assert_eq!(a.missing(), 1);
    assert_eq!(a.roles[0].uncounted_members.len(), 1);
}

#[test]
fn membership_is_asked_only_where_it_decides() {
    let r = reviewers(
        &[
            review(1, "bob", ReviewState::Approved, HEAD),
            review(2, "vp-eng", ReviewState::Approved, HEAD),
            review(3, "old", ReviewState::Approved, OLD),
        ],
        "alice",
        &[],
        HEAD,
    );
    let need = [
        role("director", 1, &["org/directors"], &["vp-eng"]),
        role("vp", 1, &[], &["vp-eng"]),
    ];
    let q = membership_queries(&need, &r);
    assert_eq!(
        q.into_iter().collect::<Vec<_>>(),
        vec![("org/directors".to_string(), "bob".to_string())]
    );
}

#[test]
fn matching_finds_the_maximum_where_greedy_would_not() {
    // Three roles, three people: p0 fits A and B, p1 fits A, p2 fits B and C.
    // Greedy slot-by-slot in listing order (A<-p0, B<-p2, C<-none) leaves C
    // open; the maximum (A<-p1, B<-p0, C<-p2) fills all three.
    let slots = [0, 1, 2];
    let fits =
        |role: usize, p: usize| matches!((role, p), (0, 0) | (1, 0) | (0, 1) | (1, 2) | (2, 2));
    let owner = matching(&slots, 3, &fits);
    assert!(owner.iter().all(Option::is_some), "{owner:?}");
}

fn decision(outcome: Outcome, missing_fields: Vec<&'static str>) -> Decision {
    Decision {
        outcome,
        tier: None,
        approvals: Vec::new(),
        missing_fields,
        findings: Vec::new(),
        trace: Vec::new(),
        facts: Default::default(),
        error: false,
    }
}

#[test]
fn standing_combines_the_outcome_and_the_approvals() {
    let done = DecisionApprovals::default();
    let open = DecisionApprovals {
        roles: vec![RoleStatus {
            role: "director".into(),
            needed: 1,
            from: String::new(),
            approved_by: Vec::new(),
            missing: 1,
            teams: Vec::new(),
            users: Vec::new(),
            uncounted_members: Vec::new(),
            changes_requested_by: Vec::new(),
        }],
    };
    let needs = decision(Outcome::NeedsApproval, vec![]);
    assert_eq!(standing(&needs, &done), Standing::Approved);
    assert_eq!(standing(&needs, &open), Standing::ApprovalsMissing);
    assert_eq!(
        standing(&decision(Outcome::NeedsApproval, vec!["window"]), &done),
        Standing::FieldsMissing
    );
    assert_eq!(
        standing(&decision(Outcome::Denied, vec![]), &done),
        Standing::Denied
    );
    assert_eq!(
        standing(&decision(Outcome::Approved, vec![]), &done),
        Standing::Automatic
    );
    let broken = Decision {
        error: true,
        ..decision(Outcome::NeedsApproval, vec![])
    };
    assert_eq!(standing(&broken, &done), Standing::PolicyError);
    assert!(Standing::Approved.passes() && Standing::Automatic.passes());
    assert!(!Standing::ApprovalsMissing.passes());
}

#[test]
fn whoever_wrote_a_commit_of_the_pull_request_does_not_approve_it() {
    let reviews = vec![
        review(1, "Bob", ReviewState::Approved, HEAD),
        review(2, "dave", ReviewState::Approved, HEAD),
    ];
    let r = reviewers(&reviews, "alice", &["bob".to_string()], HEAD);
    assert_eq!(r.approvers.len(), 1);
    assert_eq!(r.approvers[0].login, "dave");
    assert_eq!(r.not_counted, vec![("Bob".to_string(), NotCounted::Pusher)]);
}

#[test]
fn a_role_holder_asking_for_changes_blocks_the_role_whatever_others_approved() {
    // carol (a director) asks for changes on an older commit; bob (a
    // director) approves the head. The director role is not met: a push
    // does not lift carol's objection, only her approval or a dismissal.
    let required = [
        role("director", 1, &["org/directors"], &[]),
        role("capacity-review", 1, &["org/review"], &[]),
    ];
    let r = reviewers(
        &[
            review(1, "carol", ReviewState::ChangesRequested, OLD),
            review(2, "bob", ReviewState::Approved, HEAD),
            review(3, "dave", ReviewState::Approved, HEAD),
        ],
        "alice",
        &[],
        HEAD,
    );
    let a = verify(&required, &r, &members);
    assert_eq!(a.missing(), 0);
    assert!(!a.satisfied());
    assert_eq!(a.roles[0].changes_requested_by, ["carol"]);
    // Her objection does not touch a role she does not hold.
    assert!(a.roles[1].changes_requested_by.is_empty());
    // She approves: met.
    let r = reviewers(
        &[
            review(1, "carol", ReviewState::ChangesRequested, OLD),
            review(2, "bob", ReviewState::Approved, HEAD),
            review(3, "dave", ReviewState::Approved, HEAD),
            review(4, "carol", ReviewState::Approved, HEAD),
        ],
        "alice",
        &[],
        HEAD,
    );
    assert!(verify(&required, &r, &members).satisfied());
    // Dismissed: met.
    let r = reviewers(
        &[
            review(1, "carol", ReviewState::ChangesRequested, OLD),
            review(2, "bob", ReviewState::Approved, HEAD),
            review(3, "dave", ReviewState::Approved, HEAD),
            review(4, "carol", ReviewState::Dismissed, OLD),
        ],
        "alice",
        &[],
        HEAD,
    );
    assert!(verify(&required, &r, &members).satisfied());
    // Someone outside every role (or the author, or a bot) asking for
    // changes blocks nothing.
    let mut bot = review(5, "helper[bot]", ReviewState::ChangesRequested, HEAD);
    bot.bot = true;
    let r = reviewers(
        &[
            review(1, "zed", ReviewState::ChangesRequested, HEAD),
            review(2, "bob", ReviewState::Approved, HEAD),
            review(3, "dave", ReviewState::Approved, HEAD),
            review(4, "alice", ReviewState::ChangesRequested, HEAD),
            bot,
        ],
        "alice",
        &[],
        HEAD,
    );
    assert!(verify(&required, &r, &members).satisfied());
    // One whose membership GitHub cannot tell blocks too (fail closed).
    let unknown = |team: &str, login: &str| match (team, login) {
        ("org/directors", "carol") => Membership::Unknown("403".into()),
        _ => members(team, login),
    };
    let r = reviewers(
        &[
            review(1, "carol", ReviewState::ChangesRequested, HEAD),
            review(2, "bob", ReviewState::Approved, HEAD),
            review(3, "dave", ReviewState::Approved, HEAD),
        ],
        "alice",
        &[],
        HEAD,
    );
    let a = verify(&required, &r, &unknown);
    assert!(!a.satisfied());
    assert_eq!(a.roles[0].changes_requested_by, ["carol"]);
    // Membership of an objector is asked for where it decides.
    let q = membership_queries(
        &required,
        &reviewers(
            &[review(1, "carol", ReviewState::ChangesRequested, HEAD)],
            "alice",
            &[],
            HEAD,
        ),
    );
    assert!(
        q.contains(&("org/directors".to_string(), "carol".to_string())),
        "{q:?}"
    );
}
