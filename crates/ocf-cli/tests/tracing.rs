//! `RUST_LOG` shows what a command spent its time on: the spans of the engine's calls on stderr,
//! each closed with its time; without it, stderr stays quiet.

use std::process::{Command, Output};

fn sheet(rust_log: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ocf"));
    command
        .args(["sheet", "testdata/characters/fighter-5.yaml", "--json"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .env_remove("RUST_LOG");
    if let Some(filter) = rust_log {
        command.env("RUST_LOG", filter);
    }
    command.output().expect("ocf runs")
}

#[test]
fn rust_log_shows_the_calls_spans_with_their_times() {
    let output = sheet(Some("ocf_load=info,ocf_engine=info"));
    assert!(output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    for span in [
        "build{",
        "loadRuleset{",
        "computeSheet{",
        "session.open{",
        "session.sheet{",
    ] {
        let line = stderr
            .lines()
            .find(|l| l.contains(span) && l.contains("close"))
            .unwrap_or_else(|| panic!("no closed `{span}` span in:\n{stderr}"));
        assert!(line.contains("time.busy="), "{line}");
    }
    // The sheet nests in computeSheet: its fields are computed inside the call's span.
    assert!(
        stderr.contains("computeSheet{character=aldric}:session.sheet{"),
        "{stderr}"
    );
}

#[test]
fn without_rust_log_stderr_is_quiet_and_the_output_the_same() {
    let quiet = sheet(None);
    let traced = sheet(Some("info"));
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
    assert_eq!(quiet.stdout, traced.stdout);
}
