//! `ocf build` and `ocf check` as an author sees them: the rendered report, the JSON problems, exit
//! codes and the release written.

use expect_test::{Expect, expect};
use std::process::Command;

fn ocf(args: &[&str]) -> (String, String, i32) {
    let output = Command::new(env!("CARGO_BIN_EXE_ocf"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("ocf runs");
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
        output.status.code().unwrap_or(-1),
    )
}

fn check(args: &[&str], code: i32, stdout: Expect, stderr: Expect) {
    let (out, err, status) = ocf(args);
    assert_eq!(status, code, "exit code of ocf {args:?}: {out}{err}");
    stdout.assert_eq(&out);
    stderr.assert_eq(&err);
}

#[test]
fn check_renders_every_problem_like_a_compiler() {
    check(
        &[
            "check",
            "testdata/build/broken",
            "--dep",
            "testdata/build/base",
        ],
        1,
        expect![[r#"
            testdata/build/broken/rules/a-fields.yaml:5:65: formula-error: formula-syntax: expected `)` to close the arguments, found the end of the formula
              |
            5 |   str.mod: { type: integer, formula: 'floor((str.score - 10) / 2' }
              |                                                                 ^
            testdata/build/broken/rules/a-fields.yaml:6:54: unknown-tag: the tag `armour` is not declared
              |
            6 |   ac: { type: integer, formula: 10 + str.mod, tags: [armour] }
              |                                                      ^
            testdata/build/broken/rules/b-actions.yaml:2:3: duplicate-id: `fields.level` is also declared at rules/a-fields.yaml:3
              |
            2 |   level: { type: integer }
              |   ^
            testdata/build/broken/rules/b-actions.yaml:6:40: unknown-reference: no band set `hits` in broken or its dependencies
              |
            6 |       - { id: roll, kind: roll, bands: hits, tags: [attack.melee], parts: [{ dice: 1d20 }] }
              |                                        ^
            testdata/build/broken/rules/b-actions.yaml:6:53: unknown-tag: the tag `attack.melee` is not declared
              |
            6 |       - { id: roll, kind: roll, bands: hits, tags: [attack.melee], parts: [{ dice: 1d20 }] }
              |                                                     ^
            testdata/build/broken/content/classes.yaml:3:10: unknown-tag: the tag `martial` is not declared
              |
            3 |   tags: [martial]
              |          ^
            testdata/build/broken/content/classes.yaml:6:15: unknown-reference: no content item `features.missing` in broken or its dependencies
              |
            6 |     - { item: features.missing }
              |               ^
            testdata/build/broken/content/classes.yaml:7:36: formula-error: type-mismatch: an activation condition reads `ac`, which is not an input field: activation is decided before fields are computed
              |
            7 |     - { item: features.rage, when: ac > 12 }
              |                                    ^
            testdata/build/broken/content/classes.yaml:8:15: unknown-reference: `other:features.dash` names the pack `other`, which is not a dependency of broken
              |
            8 |     - { item: other:features.dash }
              |               ^
            testdata/build/broken/content/classes.yaml:10:56: formula-error: formula-syntax: expected an expression after `+`, found the end of the formula
               |
            10 |     - { target: base:hp.max, op: add, value: 'str.mod +' }
               |                                                        ^
            testdata/build/broken/content/classes.yaml:11:17: unknown-reference: no field `speed` in broken or its dependencies
               |
            11 |     - { target: speed, op: add, value: 5 }
               |                 ^
            testdata/build/broken/content/classes.yaml:13:27: unknown-reference: no content item `conditions.frightened` in broken or its dependencies
               |
            13 |     - { id: fear, items: [conditions.frightened], when: hp.max > 5 }
               |                           ^
            testdata/build/broken/content/classes.yaml:13:57: formula-error: type-mismatch: an activation condition reads `hp.max`, which is not an input field: activation is decided before fields are computed
               |
            13 |     - { id: fear, items: [conditions.frightened], when: hp.max > 5 }
               |                                                         ^
            testdata/build/broken/content/classes.yaml:14:3: duplicate-id: the content ID `classes.fighter` is also declared at content/classes.yaml:1
               |
            14 | - id: classes.fighter
               |   ^
            testdata/build/broken/content/features.yaml:4:9: unknown-reference: no content type `feture` in broken or its dependencies
              |
            4 |   type: feture
              |         ^
            testdata/build/broken/content/features.yaml:5:3: circular-extends: `extends` loops: features.rage -> features.fury -> features.rage
              |
            5 |   extends: features.fury
              |   ^
            testdata/build/broken/content/features.yaml:15:38: formula-error: type-mismatch: expected bool, found int
               |
            15 |   prerequisites: [{ id: loud, check: level + 1 }]
               |                                      ^
            17 errors
        "#]],
        expect![[r#""#]],
    );
}

#[test]
fn check_json_is_an_array_of_problems() {
    check(
        &["check", "--json", "testdata/build/unreadable"],
        1,
        expect![[r#"
            [
              {
                "severity": "error",
                "code": "unknown-key",
                "message": "unknown key `defualt`, did you mean `default`?",
                "file": "testdata/build/unreadable/rules/fields.yaml",
                "line": 2,
                "column": 40,
                "pointer": "/fields/level",
                "data": {
                  "key": "defualt",
                  "suggestion": "default"
                }
              },
              {
                "severity": "error",
                "code": "invalid-document",
                "message": "unknown variant `sideways`, expected one of `floor`, `ceil`, `round`",
                "file": "testdata/build/unreadable/rules/settings.yaml",
                "line": 2,
                "column": 13,
                "pointer": "/settings/rounding"
              },
              {
                "severity": "error",
                "code": "invalid-yaml",
                "message": "while parsing a flow mapping, did not find expected ',' or '}'",
                "file": "testdata/build/unreadable/content/truncated.yaml",
                "line": 4,
                "column": 1,
                "pointer": ""
              },
              {
                "severity": "error",
                "code": "invalid-document",
                "message": "invalid type: string \"damage.fire\", expected a sequence",
                "file": "testdata/build/unreadable/content/wrong-type.yaml",
                "line": 2,
                "column": 7,
                "pointer": "/tags"
              },
              {
                "severity": "warning",
                "code": "ignored-file",
                "message": "source files end in `.yaml`; this one is not read",
                "file": "testdata/build/unreadable/content/notes.yml",
                "pointer": ""
              }
            ]
        "#]],
        expect![[r#""#]],
    );
}

#[test]
fn build_writes_the_release_or_fails_with_the_problems() {
    let out = std::env::temp_dir().join(format!("ocf-build-{}.json", std::process::id()));
    let out_arg = out.display().to_string();
    let (stdout, stderr, status) = ocf(&["build", "testdata/model/pack", "-o", &out_arg]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(stdout, "");
    let written = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    let expected = std::fs::read_to_string("../../testdata/build/model-pack.release.json").unwrap();
    assert_eq!(written.trim_end(), expected.trim_end());
    // Warnings go to stderr and don't fail the build.
    assert!(stderr.contains("warning: unchecked-dependency"), "{stderr}");

    let (stdout, stderr, status) = ocf(&["build", "testdata/build/base"]);
    assert_eq!((status, stderr.as_str()), (0, ""));
    assert!(stdout.starts_with("{\n  \"id\": \"base\""), "{stdout}");

    let (stdout, stderr, status) = ocf(&["build", "testdata/build/unreadable"]);
    assert_eq!((status, stdout.as_str()), (1, ""));
    assert!(stderr.ends_with("4 errors, 1 warning\n"), "{stderr}");
}
