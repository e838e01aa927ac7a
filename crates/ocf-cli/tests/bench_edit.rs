//! `ocf bench-edit`: the shape of its report and the invariants its counts must hold. Times are
//! not asserted on (they depend on the machine and its load), only that they are there.

use expect_test::expect;
use serde_json::Value;
use std::process::Command;

fn ocf(args: &[&str]) -> (String, String, i32) {
    let output = Command::new(env!("CARGO_BIN_EXE_ocf"))
        .args(args)
        .output()
        .expect("ocf runs");
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
        output.status.code().unwrap_or(-1),
    )
}

#[test]
fn json_report_has_the_issues_keys_and_consistent_counts() {
    let (stdout, stderr, code) = ocf(&["bench-edit", "--json", "--fields", "200", "--edits", "3"]);
    assert_eq!(code, 0, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).expect("one JSON object");
    let keys: Vec<&str> = report
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    expect![[r#"
        [
            "fields",
            "cold_ms",
            "incremental_ms",
            "scratch_ms",
            "ratio",
            "reexecuted",
            "dependents",
        ]
    "#]]
    .assert_debug_eq(&keys);
    let count = |key: &str| {
        report[key]
            .as_u64()
            .unwrap_or_else(|| panic!("{key}: {report}"))
    };
    let time = |key: &str| {
        report[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key}: {report}"))
    };
    for key in ["cold_ms", "incremental_ms", "scratch_ms", "ratio"] {
        assert!(time(key) >= 0.0, "{key}: {report}");
    }
    assert_eq!(count("fields"), 200);
    // 200 fields: 10 scores, 10 modifiers, 180 derived fields `f{i}` reading `mod{i % 10}` and
    // `f{i - 10}`. `score0` reaches `mod0`; through it the 18 fields f0, f10, ..., f170; and,
    // through the effect of item 0 adding `mod0` to f13, the 17 fields f13, f23, ..., f173.
    assert_eq!(count("dependents"), 1 + 18 + 17);
    // Every dependent's value changes with the edit (mod0 goes 2 <-> 3, and nothing clamps it
    // away), so each is executed again, and so is the edited score itself.
    assert!(
        count("reexecuted") > count("dependents"),
        "reexecuted {} <= dependents {}",
        count("reexecuted"),
        count("dependents")
    );
}

#[test]
fn human_report_says_what_each_number_means() {
    let (stdout, stderr, code) = ocf(&["bench-edit", "--fields", "40", "--edits", "1"]);
    assert_eq!(code, 0, "{stderr}");
    let labels: Vec<&str> = stdout
        .lines()
        .map(|line| line.split("  ").next().unwrap_or_default())
        .collect();
    expect![[r#"
        [
            "a generated character: 40 fields (2 input scores, 2 modifiers, 36 derived), 2 copies with 3 effects each",
            "the edit: g:score0 saved as 14 <-> 16",
            "",
            "cold",
            "incremental",
            "from scratch",
            "ratio",
            "re-executed",
            "dependents",
            "first edit",
        ]
    "#]]
    .assert_debug_eq(&labels);
}

#[test]
fn sizes_out_of_bounds_are_refused() {
    let (_, stderr, code) = ocf(&["bench-edit", "--fields", "2"]);
    assert_eq!(code, 1);
    expect![[r#"
        error: --fields: a generated character has 3 to 200000 fields, not 2
    "#]]
    .assert_eq(&stderr);
    let (_, stderr, code) = ocf(&["bench-edit", "--fields", "20001"]);
    assert_eq!(code, 1);
    expect![[r#"
        error: --fields: at most 20000, not 20001
    "#]]
    .assert_eq(&stderr);
    let (_, stderr, code) = ocf(&["bench-edit", "--fields", "3", "--edits", "0"]);
    assert_eq!(code, 1);
    expect![[r#"
        error: --edits: 1 to 10000 edits, not 0
    "#]]
    .assert_eq(&stderr);
}
