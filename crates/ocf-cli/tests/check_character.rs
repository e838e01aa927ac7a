//! `ocf check CHARACTER` as a player or an app author sees it: a character file checked as a pack
//! is, every problem at once, each with its code, file, line and column (YAML and JSON alike),
//! rendered as pack problems are.

use expect_test::{Expect, expect};

mod support;
use support::ocf;

const PACK: &str = "testdata/check-character/packs/keep";

fn check(file: &str, code: i32, expect: Expect) {
    let path = format!("testdata/check-character/{file}");
    let (text, status) = ocf(&["check", &path, "--pack", PACK]);
    assert_eq!(status, code, "exit code of ocf check {path}: {text}");
    expect.assert_eq(&text);
}

#[test]
fn every_problem_of_a_yaml_character_at_once() {
    check(
        "many-problems.yaml",
        1,
        expect![[r#"
            testdata/check-character/many-problems.yaml:4:5: missing-dependency: the file pins `keep` 1.1.0, and the ruleset holds 1.0.0
              |
            4 |   - { id: keep, version: 1.1.0 }
              |     ^
            testdata/check-character/many-problems.yaml:6:8: out-of-range: the saved value 25 is outside the field's bounds; it is read as 20
              |
            6 |   str: 25
              |        ^
            testdata/check-character/many-problems.yaml:7:7: not-input-field: `keep:ac` is not an input field; its saved value is ignored
              |
            7 |   ac: 3
              |       ^
            testdata/check-character/many-problems.yaml:9:51: unknown-key: `keep:wand` declares no state key `chrages`, did you mean `charges`?
              |
            9 |   - { id: w, item: 'keep:wand', state: { chrages: 2, charges: 9 } }
              |                                                   ^
            testdata/check-character/many-problems.yaml:9:63: out-of-range: the state `charges` is 9, outside its bounds; it is read as 7
              |
            9 |   - { id: w, item: 'keep:wand', state: { chrages: 2, charges: 9 } }
              |                                                               ^
            testdata/check-character/many-problems.yaml:10:11: duplicate-id: another entry has the ID `w`; this one is left out
               |
            10 |   - { id: w, item: 'keep:shield' }
               |           ^
            testdata/check-character/many-problems.yaml:11:20: unknown-reference: no pack declares the content `keep:staff`; the copy is left out
               |
            11 |   - { id: x, item: 'keep:staff' }
               |                    ^
            7 errors
        "#]],
    );
}

#[test]
fn json_characters_have_lines_and_columns_too() {
    check(
        "many-problems.json",
        1,
        expect![[r#"
            testdata/check-character/many-problems.json:4:13: missing-dependency: the file pins `keep` 1.1.0, and the ruleset holds 1.0.0
              |
            4 |   "packs": [{ "id": "keep", "version": "1.1.0" }],
              |             ^
            testdata/check-character/many-problems.json:6:61: wrong-type: the state `charges` is "full", not an integer; its default is used
              |
            6 |     { "id": "w", "item": "keep:wand", "state": { "charges": "full" } },
              |                                                             ^
            testdata/check-character/many-problems.json:7:13: duplicate-id: another entry has the ID `w`; this one is left out
              |
            7 |     { "id": "w", "item": "keep:shield" }
              |             ^
            3 errors
        "#]],
    );
    check(
        "bad-copy.json",
        1,
        expect![[r#"
        testdata/check-character/bad-copy.json:4:17: invalid-document: invalid type: string "x", expected struct CopyEntry
          |
        4 |   "inventory": ["x"]
          |                 ^
        1 error
    "#]],
    );
}

#[test]
fn read_errors_have_a_code_and_a_place() {
    // A byte-order mark is accepted: the error is the file's own, not a missing `specVersion`.
    check(
        "bom-bad-copy.yaml",
        1,
        expect![[r#"
        testdata/check-character/bom-bad-copy.yaml:3:13: invalid-document: invalid type: string "x", expected struct CopyEntry
          |
        3 | inventory: [x]
          |             ^
        1 error
    "#]],
    );
    check(
        "not-utf8.yaml",
        1,
        expect![[r#"
        testdata/check-character/not-utf8.yaml:3:25: invalid-document: the file is not UTF-8 (byte 50)
        1 error
    "#]],
    );
    check(
        "missing.yaml",
        1,
        expect![[r#"
        testdata/check-character/missing.yaml: unreadable-file: the file is missing
        1 error
    "#]],
    );
}

#[test]
fn a_newer_spec_version_refuses_the_file() {
    check(
        "newer-spec.yaml",
        1,
        expect![[r#"
        testdata/check-character/newer-spec.yaml:2:14: spec-version-unsupported: the file is written for spec 2.0.0; this engine implements 1.0.0
          |
        2 | specVersion: 2.0.0
          |              ^
        1 error
    "#]],
    );
}

#[test]
fn a_pinned_pack_not_found_is_missing_dependency() {
    let (text, status) = ocf(&["check", "testdata/check-character/unpinned.yaml"]);
    assert_eq!(status, 1);
    expect![[r#"
        testdata/check-character/unpinned.yaml:4:5: missing-dependency: the pinned pack `nowhere` is not found under testdata/packs/; pass it with --pack
          |
        4 |   - { id: nowhere, version: 1.0.0 }
          |     ^
        1 error
    "#]].assert_eq(&text);
}

#[test]
fn sample_characters_check_clean() {
    let (text, status) = ocf(&[
        "check",
        "testdata/characters/fighter-5.yaml",
        "testdata/characters/scoundrel-cutter.yaml",
    ]);
    assert_eq!(status, 0, "{text}");
    expect![[r#"
        no problems
    "#]]
    .assert_eq(&text);
}

#[test]
fn json_output_lists_the_problems_with_pointers() {
    let (text, status) = ocf(&["check", "--json", "testdata/check-character/bad-copy.json"]);
    assert_eq!(status, 1);
    expect![[r#"
        [
          {
            "severity": "error",
            "code": "invalid-document",
            "message": "invalid type: string \"x\", expected struct CopyEntry",
            "file": "testdata/check-character/bad-copy.json",
            "line": 4,
            "column": 17,
            "pointer": "/inventory/0"
          }
        ]
    "#]]
    .assert_eq(&text);
}

#[test]
fn sheet_reports_read_errors_with_their_code() {
    let (text, status) = ocf(&["sheet", "testdata/check-character/bad-copy.json"]);
    assert_eq!(status, 1);
    expect![[r#"
        testdata/check-character/bad-copy.json:4:17: invalid-document: invalid type: string "x", expected struct CopyEntry
          |
        4 |   "inventory": ["x"]
          |                 ^
    "#]].assert_eq(&text);
}

#[test]
fn a_deeply_nested_file_is_refused_by_the_nesting_limit() {
    let path = std::env::temp_dir().join(format!("ocf-deep-{}.json", std::process::id()));
    std::fs::write(
        &path,
        format!("{}{}", "[".repeat(50_000), "]".repeat(50_000)),
    )
    .unwrap();
    let (text, status) = ocf(&["check", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(status, 1);
    // The headline (the snippet is the file's one long line).
    let headline = text.lines().next().unwrap_or_default();
    let headline = headline.replace(path.to_str().unwrap(), "deep.json");
    expect![[r#"deep.json:1:256: safety-limit-exceeded: maps and lists nest more than 64 deep"#]]
        .assert_eq(&headline);
    assert!(text.ends_with("1 error\n"), "{text}");
}

#[test]
fn missing_files_have_a_code_in_every_command() {
    let mut out = String::new();
    for args in [
        &["sheet", "testdata/check-character/missing.yaml"][..],
        &["load", "testdata/check-character/missing.json"][..],
        &[
            "formula",
            "eval",
            "1",
            "--context",
            "testdata/check-character/missing.json",
        ][..],
        &["sheet", "testdata/check-character/unpinned.yaml"][..],
    ] {
        let (text, status) = ocf(args);
        assert_ne!(status, 0, "{args:?}: {text}");
        out.push_str(&text);
    }
    expect![[r#"
        testdata/check-character/missing.yaml: unreadable-file: the file is missing
        testdata/check-character/missing.json: unreadable-file: the file is missing
        ocf: unreadable-file: cannot read the context testdata/check-character/missing.json: No such file or directory (os error 2)
        testdata/check-character/unpinned.yaml:4:5: missing-dependency: the pinned pack `nowhere` is not found under testdata/packs/; pass it with --pack
          |
        4 |   - { id: nowhere, version: 1.0.0 }
          |     ^
    "#]].assert_eq(&out);
}
