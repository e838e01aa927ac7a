//! `ocf users` and `ocf serve`'s start: users, roles and tokens managed from the CLI in the
//! service's store, and a service with no account refusing to start open off loopback.

use std::io::Write;
use std::process::{Command, Stdio};

fn ocf(args: &[&str], stdin: &str) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ocf"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn users_roles_and_tokens_are_managed_from_the_cli_and_an_open_service_stays_on_loopback() {
    let dir = std::env::temp_dir().join(format!("ocf-serve-accounts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let store = format!("sqlite:{}", dir.join("store.sqlite3").display());

    let (_, help, _) = ocf(&["serve", "--help"], "");
    assert!(help.contains("postgres://"), "{help}");

    // No account: it refuses to listen on every interface, and says why.
    let (ok, _, err) = ocf(&["serve", "--addr", "0.0.0.0:0", "--store", &store], "");
    assert!(!ok);
    assert!(err.contains("refusing to start open on 0.0.0.0:0"), "{err}");

    let (ok, out, err) = ocf(
        &[
            "users",
            "add",
            "gm",
            "--role",
            "gamemaster",
            "--store",
            &store,
        ],
        "correct horse\n",
    );
    assert!(ok, "{err}");
    assert_eq!(out, "gm\tgamemaster\n");
    let (ok, _, err) = ocf(
        &["users", "add", "pat", "--role", "bard", "--store", &store],
        "correct horse\n",
    );
    assert!(!ok);
    assert!(err.contains("unknown role `bard`"), "{err}");
    let (ok, _, err) = ocf(
        &["users", "add", "pat", "--role", "player", "--store", &store],
        "short\n",
    );
    assert!(!ok);
    assert!(err.contains("at least 8"), "{err}");
    let (ok, _, _) = ocf(
        &["users", "add", "pat", "--role", "player", "--store", &store],
        "battery staple\n",
    );
    assert!(ok);
    let (ok, _, _) = ocf(&["users", "role", "pat", "observer", "--store", &store], "");
    assert!(ok);
    let (_, list, _) = ocf(&["users", "list", "--store", &store], "");
    assert_eq!(list, "gm\tgamemaster\npat\tobserver\n");

    let (ok, token, _) = ocf(
        &["users", "token", "pat", "--days", "30", "--store", &store],
        "",
    );
    assert!(ok);
    let token = token.trim();
    assert!(token.starts_with("ocf_") && token.len() > 40, "{token}");
    let (_, tokens, _) = ocf(&["users", "tokens", "--store", &store], "");
    let label = &token[..12];
    assert!(
        tokens.starts_with(&format!("{label}\tpat\texpires at ")),
        "{tokens}"
    );
    assert!(
        !tokens.contains(token),
        "the store keeps no token: {tokens}"
    );
    let (ok, _, _) = ocf(&["users", "revoke", label, "--store", &store], "");
    assert!(ok);
    let (_, tokens, _) = ocf(&["users", "tokens", "--store", &store], "");
    assert_eq!(tokens, "");
    let (ok, _, _) = ocf(&["users", "remove", "pat", "--store", &store], "");
    assert!(ok);
    let (_, list, _) = ocf(&["users", "list", "--store", &store], "");
    assert_eq!(list, "gm\tgamemaster\n");
    let _ = std::fs::remove_dir_all(&dir);
}
