//! Runs every conformance case under `testdata/conformance/`, as `ocf conform` does.

use std::path::PathBuf;

fn testdata(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(path)
}

#[test]
fn every_conformance_case_passes() {
    let summary = ocf_cli::conform::run(&[testdata("conformance")]);
    let mut report = String::new();
    for failure in &summary.failures {
        report.push_str(&format!("{}\n{}\n", failure.path.display(), failure.report));
    }
    assert!(
        summary.failures.is_empty(),
        "{report}{}",
        summary.closing_line()
    );
    assert!(
        summary.passed >= 28,
        "the cases were not found: {}",
        summary.closing_line()
    );
}

#[test]
fn a_failing_case_is_reported_with_its_diff() {
    let dir = std::env::temp_dir().join(format!("ocf-conform-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write(
        "a-value.yaml",
        "call: formula\ninput: { formula: '1 + 1' }\nexpect: 3\n",
    );
    write(
        "b-error.yaml",
        "call: formula\ninput: { formula: 'x.' }\nexpectError: [type-mismatch]\n",
    );
    write(
        "c-pass.yaml",
        "call: formula\ninput: { formula: '[1, 2]' }\nexpect: [1, 2.0]\n",
    );
    write("d-unknown.yaml", "call: nonsense\nexpect: 1\n");
    write(
        "e-both.yaml",
        "call: formula\nexpect: 1\nexpectError: [x]\n",
    );
    let summary = ocf_cli::conform::run(std::slice::from_ref(&dir));
    let reports: Vec<String> = summary
        .failures
        .iter()
        .map(|f| {
            format!(
                "{}: {}",
                f.path.file_name().unwrap().to_string_lossy(),
                f.report
            )
        })
        .collect();
    std::fs::remove_dir_all(&dir).unwrap();
    expect_test::expect![[r#"
        [
            "a-value.yaml: at /: expected 3, got 2",
            "b-error.yaml: at /0/code: expected \"type-mismatch\", got \"formula-syntax\"",
            "d-unknown.yaml: unknown call `nonsense`",
            "e-both.yaml: a case gives `expect` or `expectError`, not both",
        ]
    "#]]
    .assert_debug_eq(&reports);
    assert_eq!(summary.closing_line(), "1 passed, 4 failed");
}

/// Every computeSheet case again, through a session whose saved values are each edited away and
/// back, twice (a value's first edit lowers its durability; the second takes the path later edits
/// take, decisions.md "Durability"), reading the sheet after each edit: the sheet must end as a
/// fresh computeSheet gives it, to the last field.
#[test]
fn every_compute_sheet_case_survives_editing_its_values_away_and_back() {
    use ocf_cli::conform::{calls, case::Case};
    let dir = testdata("conformance/computeSheet");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    paths.sort();
    let mut checked = 0;
    for path in paths {
        let case = Case::read(&path).unwrap();
        let Ok(call) = calls::sheet_call(&case, path.parent().unwrap()).unwrap() else {
            continue;
        };
        let fresh = ocf_engine::compute_sheet_call(
            &call.ruleset,
            &call.character,
            &call.competing,
            &call.links,
        );
        let mut session = ocf_engine::Session::new(call.ruleset.clone());
        let id = session.open(&call.character, &call.competing);
        session.set_links(id, call.links.clone()).unwrap();
        let _ = session.sheet_json(id);
        for _ in 0..2 {
            for (field, value) in call.character.values.iter() {
                session.set_value(id, field, None).unwrap();
                let _ = session.sheet_json(id);
                session.set_value(id, field, Some(value.clone())).unwrap();
                let _ = session.sheet_json(id);
            }
        }
        assert_eq!(
            session.sheet_json(id).unwrap(),
            fresh,
            "{}: the edited session's sheet differs from a fresh one",
            path.display()
        );
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} cases were checked");
}
