//! The `ocf` command's contract, as other tools see it: output and exit codes.

use expect_test::{Expect, expect};
use std::process::Command;

mod support;
use support::ocf;

fn check(args: &[&str], code: i32, expect: Expect) {
    let (text, status) = ocf(args);
    assert_eq!(status, code, "exit code of ocf {args:?}: {text}");
    expect.assert_eq(&text);
}

#[test]
fn formula_parse_prints_the_tree_with_ranges() {
    check(
        &["formula", "parse", "-x in [1]"],
        0,
        expect![[r#"
            FORMULA@0..9
              BIN_EXPR@0..9
                PREFIX_EXPR@0..2
                  MINUS@0..1 "-"
                  NAME_REF@1..2
                    IDENT@1..2 "x"
                WHITESPACE@2..3 " "
                IN_KW@3..5 "in"
                WHITESPACE@5..6 " "
                LIST_EXPR@6..9
                  L_BRACK@6..7 "["
                  LITERAL@7..8
                    INT@7..8 "1"
                  R_BRACK@8..9 "]"
        "#]],
    );
    check(
        &["formula", "parse", "1 +"],
        1,
        expect![[r#"
            FORMULA@0..3
              BIN_EXPR@0..3
                LITERAL@0..1
                  INT@0..1 "1"
                WHITESPACE@1..2 " "
                PLUS@2..3 "+"
            error 3..3: formula-syntax: expected an expression after `+`, found the end of the formula
        "#]],
    );
}

#[test]
fn formula_print_gives_the_canonical_text() {
    check(
        &["formula", "print", "a+b*-c ?\"x\":[1,2,]"],
        0,
        expect![[r#"
            a + b * -c ? 'x' : [1, 2]
        "#]],
    );
    check(
        &["formula", "print", "2d20kh + 1"],
        0,
        expect![[r#"
            2d20kh1 + 1
        "#]],
    );
    check(
        &["formula", "print", "(1"],
        1,
        expect![[r#"
            error 2..2: formula-syntax: expected `)` to close `(`, found the end of the formula
        "#]],
    );
}

#[test]
fn formula_eval_prints_json() {
    for (formula, printed) in [
        ("7", "7"),
        ("7.0", "7.0"),
        ("0.1 + 0.2", "0.3"),
        ("2d6 + 1", "\"2d6 + 1\""),
        ("['a', 1, 2.5, true, null]", "[\"a\",1,2.5,true,null]"),
        ("-(1 + 2)", "-3"),
    ] {
        let (text, status) = ocf(&["formula", "eval", formula]);
        assert_eq!((text.trim(), status), (printed, 0), "{formula}");
    }
}

/// formulas.md: a decimal's JSON is "a number with a point: `7.0`, `0.5`", so never an exponent,
/// however small or large it is.
#[test]
fn formula_eval_prints_every_decimal_plainly_with_its_point() {
    for (formula, printed) in [
        ("0.000001", "0.000001"),
        ("0.000009", "0.000009"),
        ("-0.000005", "-0.000005"),
        ("0.00001", "0.00001"),
        ("[0.000001, 1 / 1000000]", "[0.000001,0.000001]"),
        ("10000000000000 / 10", "1000000000000.0"),
        ("-9223372036854 - 0.5", "-9223372036854.5"),
        ("123456789.123456", "123456789.123456"),
    ] {
        let (text, status) = ocf(&["formula", "eval", formula]);
        assert_eq!((text.trim(), status), (printed, 0), "{formula}");
    }
}

/// The same on a sheet, `--json` and for people: a decimal field's value keeps its point.
#[test]
fn sheet_prints_small_decimals_plainly() {
    let dir = std::env::temp_dir().join(format!("ocf-small-decimals-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pack = dir.join("pack.json");
    std::fs::write(
        &pack,
        r#"{ "id": "core", "version": "1.0.0", "specVersion": "1.0.0",
             "rules": { "fields": {
               "grain": { "type": "decimal", "formula": "0.000001 * 3" },
               "whole": { "type": "decimal", "formula": "1" } } } }"#,
    )
    .unwrap();
    let character = dir.join("pc.yaml");
    std::fs::write(&character, "id: pc\nspecVersion: 1.0.0\n").unwrap();
    let args = [
        character.to_str().unwrap(),
        "--pack",
        pack.to_str().unwrap(),
    ];
    let (json, status) = ocf(&[&["sheet"][..], &args, &["--json"]].concat());
    assert_eq!(status, 0, "{json}");
    assert!(json.contains(r#""value": 0.000003"#), "{json}");
    assert!(json.contains(r#""value": 1.0"#), "{json}");
    assert!(!json.contains("e-"), "{json}");
    let (text, status) = ocf(&[&["sheet"][..], &args].concat());
    assert_eq!(status, 0, "{text}");
    assert!(text.contains("grain = 0.000003"), "{text}");
    assert!(text.contains("whole = 1.0"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn formula_eval_reads_a_context() {
    check(
        &[
            "formula",
            "eval",
            "abilities.str.mod + max(1, floor(level.total / 2))",
            "--context",
            "testdata/formulas/context.json",
        ],
        0,
        expect![[r#"
            6
        "#]],
    );
}

#[test]
fn formula_eval_errors_are_json_with_exit_1() {
    check(
        &["formula", "eval", "'a' + 1"],
        1,
        expect![[r#"
            {"error":{"code":"type-mismatch","message":"cannot apply `+` to string and int","range":[0,7]}}
        "#]],
    );
    check(
        &[
            "formula",
            "eval",
            "flags.x",
            "--context",
            "testdata/formulas/context.json",
        ],
        1,
        expect![[r#"
            {"error":{"code":"no-such-key","message":"this path is absent; guard it with has()","range":[0,7]}}
        "#]],
    );
}

#[test]
fn a_missing_context_file_is_a_usage_error() {
    let (text, status) = ocf(&["formula", "eval", "1", "--context", "no/such/file.json"]);
    assert_eq!(status, 2);
    assert!(
        text.starts_with("ocf: unreadable-file: cannot read the context no/such/file.json"),
        "{text}"
    );
}

#[test]
fn conform_ends_with_the_closing_line() {
    let (text, status) = ocf(&["conform", "testdata/conformance/formula"]);
    assert_eq!(status, 0, "{text}");
    assert!(text.trim_end().ends_with(" passed, 0 failed"), "{text}");
}

#[test]
fn roll_takes_faces_in_die_order() {
    check(
        &["roll", "4d6dl1 + 2", "--faces", "1,2,3,4"],
        0,
        expect![[r#"
            4d6dl1: [1] 2 3 4 = 9
            +2
            total 11
        "#]],
    );
    let (text, status) = ocf(&["roll", "2d6", "--faces", "3"]);
    assert_eq!(status, 1, "{text}");
    assert!(text.contains("no-more-faces"), "{text}");
}

#[test]
fn roll_reads_its_notation_as_a_formula() {
    let (text, status) = ocf(&["roll", "(1 + 1)d6", "--faces", "2,5", "--json"]);
    assert_eq!(status, 0, "{text}");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["total"], 7);
    assert_eq!(json["items"][0]["count"], 2);
    let (text, status) = ocf(&["roll", "1d6 +"]);
    assert_eq!(status, 1);
    assert!(text.starts_with("ocf: formula-syntax"), "{text}");
}

#[test]
fn a_seeded_roll_repeats() {
    let first = ocf(&["roll", "10d10cs>=7", "--seed", "42", "--json"]);
    assert_eq!(first.1, 0);
    assert_eq!(
        first,
        ocf(&["roll", "10d10cs>=7", "--seed", "42", "--json"])
    );
}

#[test]
fn roll_distribution_is_exact() {
    check(
        &["roll", "--distribution", "1d4 + 1", "--json"],
        0,
        expect![[r#"
            {
              "distribution": {
                "2": 0.25,
                "3": 0.25,
                "4": 0.25,
                "5": 0.25
              },
              "truncated": 0.0
            }
        "#]],
    );
}

#[test]
fn roll_of_a_value_that_is_not_dice_has_a_code() {
    check(
        &["roll", "'x'"],
        1,
        expect![[r#"
            ocf: type-mismatch at 0..3: a string is not dice: `ocf roll` takes dice or an integer
        "#]],
    );
    check(
        &["roll", "true", "--json"],
        1,
        expect![[r#"
            {"error":{"code":"type-mismatch","message":"a bool is not dice: `ocf roll` takes dice or an integer","range":[0,4]}}
        "#]],
    );
}

#[test]
fn a_distribution_cut_by_a_safety_limit_says_so_and_exits_3() {
    check(
        &["roll", "--distribution", "1d1!"],
        3,
        expect![[r#"
            cut off by a safety limit: 1.000e0
            ocf: safety-limit-exceeded: rolls of probability 1.000e0 need more than maxExplosions (100) and are left out
        "#]],
    );
}

#[test]
fn large_distributions_are_answered_or_refused_with_a_code() {
    let (text, status) = ocf(&["roll", "--distribution", "1000d1000cs>500", "--json"]);
    assert_eq!(status, 0, "{text}");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["distribution"].as_object().unwrap().len(), 1001);
    let (text, status) = ocf(&["roll", "--distribution", "10d10!!"]);
    assert_eq!(status, 1, "{text}");
    assert!(text.starts_with("ocf: distribution-too-large"), "{text}");
}

#[test]
fn watch_reprints_after_an_edit_recomputing_only_what_it_reaches() {
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let dir = std::env::temp_dir().join(format!("ocf-watch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("goblin.yaml");
    let text = std::fs::read_to_string(root.join("testdata/characters/goblin.yaml")).unwrap();
    std::fs::write(&file, &text).unwrap();
    let pack = root.join("testdata/packs/5e-srd-5.1");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ocf"))
        .args([
            "watch",
            file.to_str().unwrap(),
            "--pack",
            pack.to_str().unwrap(),
        ])
        .args(["--interval", "20", "--updates", "1"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("ocf watch runs");
    // Read the output as it comes; change one saved value once the first sheet is out.
    let stdout = child.stdout.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout).lines() {
            let _ = lines.send(line.unwrap());
        }
    });
    let wait = std::time::Duration::from_secs(60);
    let mut seen = Vec::new();
    while !seen.iter().any(|l: &String| l.starts_with("-- ")) {
        match received.recv_timeout(wait) {
            Ok(line) => seen.push(line),
            Err(_) => {
                child.kill().unwrap();
                panic!("no first sheet from ocf watch:\n{}", seen.join("\n"));
            }
        }
    }
    let edited = text.replace("5e-srd-5.1:hp.current: 7", "5e-srd-5.1:hp.current: 3");
    assert_ne!(edited, text, "the goblin's saved hit points moved");
    std::fs::write(&file, edited).unwrap();
    // `--updates 1` ends the watch after the edit; a hung watch fails the test instead of CI.
    let deadline = std::time::Instant::now() + wait;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("ocf watch did not end after the edit");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    reader.join().unwrap();
    seen.extend(received.try_iter());
    std::fs::remove_dir_all(&dir).unwrap();
    let text = seen.join("\n");
    let counts: Vec<usize> = text
        .lines()
        .filter_map(|l| l.strip_prefix("-- "))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(counts.len(), 2, "a sheet, then one after the edit:\n{text}");
    assert!(
        counts[0] > 100,
        "the first sheet computes every field: {counts:?}"
    );
    assert!(
        counts[1] < 10,
        "the edit recomputes only what reads hp.current: {counts:?}"
    );
    assert!(text.contains("hp.current = 3"), "{text}");
}
