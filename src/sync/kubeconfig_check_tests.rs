//! Kubeconfigs that do not read: what and where, never the text.

use super::*;

const SECRET: &str = "s3cr3t-t0ken";

#[test]
fn a_kubeconfig_that_does_not_read_is_placed_without_quoting_it() {
    let tab = format!("apiVersion: v1\nkind: Config\nusers:\n\t- name: {SECRET}\n");
    let err = judge(tab.as_bytes()).unwrap_err();
    assert!(
        err.starts_with("it does not read as YAML: yaml-syntax at line 4"),
        "{err}"
    );
    assert!(!err.contains(SECRET), "{err}");
    let nul = format!("apiVersion: v1\ntoken: {SECRET}\0\n");
    let err = judge(nul.as_bytes()).unwrap_err();
    assert_eq!(
        err,
        "it holds binary data (a NUL byte at line 2, column 20), not YAML"
    );
    let err = judge(b"apiVersion: v1\nname: D\xe9v\n").unwrap_err();
    assert_eq!(
        err,
        "it is not UTF-8 text (an invalid byte at line 2, column 8)"
    );
    let bomb = "a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n".to_string()
        + &(1..9)
            .map(|i| {
                format!(
                    "a{i}: &a{i} [{}]\n",
                    vec![format!("*a{}", i - 1); 10].join(",")
                )
            })
            .collect::<String>();
    let err = judge(bomb.as_bytes()).unwrap_err();
    assert!(err.contains("yaml-alias-limit"), "{err}");
    for empty in ["", "\n\n", "---\n", "# nothing\n"] {
        let err = judge(empty.as_bytes()).unwrap_err();
        assert!(err.starts_with("it is empty"), "{empty:?}: {err}");
    }
    assert!(judge(b"apiVersion: v1\nkind: Config\nclusters: []\n").is_ok());
}

#[test]
fn kubes_refusal_keeps_the_place_and_drops_the_text() {
    let m = format!(
        "failed to parse kubeconfig YAML: invalid type: string \"{SECRET}\", expected a sequence at line 3 column 11"
    );
    let said = kube_refusal(&m);
    assert_eq!(
        said,
        "its fields are not those of a kubeconfig, or not of their types (at line 3, column 11)"
    );
    assert_eq!(
        kube_refusal("no place"),
        "its fields are not those of a kubeconfig, or not of their types"
    );
}

#[test]
fn kubes_refusal_of_a_wrong_type_is_placed_without_quoting_the_file() {
    // kube's words for a token written as a mapping, and for a context
    // written as a string: the place and what was expected, never a value.
    assert_eq!(
        kube_refusal(
            "failed to parse kubeconfig YAML: error: line 6 column 17: expected string scalar"
        ),
        "its fields are not those of a kubeconfig, or not of their types (at line 6, column 17: expected string scalar)"
    );
    assert_eq!(
        kube_refusal(
            "failed to parse kubeconfig YAML: error: line 7 column 12: expected mapping start"
        ),
        "its fields are not those of a kubeconfig, or not of their types (at line 7, column 12: expected mapping start)"
    );
    // Anything after the place that is not plain words is left out.
    assert_eq!(
        kube_refusal("error: line 3 column 1: invalid value: string \"s3cr3t\""),
        "its fields are not those of a kubeconfig, or not of their types (at line 3, column 1)"
    );
    assert_eq!(
        kube_refusal("something at line 2 column 5"),
        "its fields are not those of a kubeconfig, or not of their types (at line 2, column 5)"
    );
}

#[test]
fn a_name_listed_twice_in_one_file_is_refused_as_kubectl_refuses_it() {
    let text = "apiVersion: v1\nkind: Config\nclusters:\n- {name: prod, cluster: {server: \"https://staging.example\"}}\n- {name: prod, cluster: {server: \"https://prod.example\"}}\nusers:\n- {name: u, user: {}}\ncontexts:\n- {name: prod, context: {cluster: prod, user: u}}\n";
    let kc: kube::config::Kubeconfig = kubeconfig_of(text);
    assert_eq!(
        duplicate_problem(&kc).as_deref(),
        Some(
            "it lists the cluster `prod` twice (kubectl refuses such a file); keep one entry of that name"
        )
    );
    let once = text.replacen(
        "- {name: prod, cluster: {server: \"https://staging.example\"}}\n",
        "",
        1,
    );
    assert_eq!(duplicate_problem(&kubeconfig_of(&once)), None);
}

/// A kubeconfig from its text, as kube reads one.
fn kubeconfig_of(text: &str) -> kube::config::Kubeconfig {
    kube::config::Kubeconfig::from_yaml(text).unwrap()
}
