//! Hostile and broken input gives problems, never a panic, a hang or unbounded memory: huge files,
//! alias bombs, deep nesting, and random damage to a small pack's text.

use std::fs;
use std::path::PathBuf;

use ocf_load::build::{BuildOptions, BuildReport, build_files, build_report};
use proptest::prelude::*;

const MANIFEST: &str = "id: tiny\nversion: 1.0.0\nspecVersion: 1.0.0\n";

const RULES: &str = "tags: [attr.str]
fields:
  level: { type: integer, input: true, default: 1 }
  str.mod: { type: integer, formula: 'floor(level / 2)', tags: [attr.str] }
contentTypes:
  feature: { state: { uses: { type: integer, default: 0 } } }
";

const CONTENT: &str = "- id: features.a
  type: feature
  grants: [{ item: features.b, when: level >= 2 }]
  effects:
    - { target: str.mod, op: add, value: 1, when: self.uses > 0 }
- id: features.b
  type: feature
  extends: features.a
";

fn pack(content: &str) -> Vec<(String, String)> {
    vec![
        ("pack.yaml".to_owned(), MANIFEST.to_owned()),
        ("rules/rules.yaml".to_owned(), RULES.to_owned()),
        ("content/items.yaml".to_owned(), content.to_owned()),
    ]
}

/// `code` at `file`, as `file code limit` lines.
fn summary(report: &BuildReport) -> Vec<String> {
    report
        .problems
        .iter()
        .map(|p| {
            let limit = p.data.get("limit").and_then(|l| l.as_str()).unwrap_or("");
            format!("{} {} {limit}", p.file, p.code)
                .trim_end()
                .to_owned()
        })
        .collect()
}

#[test]
fn the_tiny_pack_builds() {
    let report = build_files(&pack(CONTENT), &BuildOptions::default());
    assert_eq!(summary(&report), Vec::<String>::new());
    assert_eq!(report.release.unwrap().content.len(), 2);
}

#[test]
fn a_ten_megabyte_string_is_refused_by_the_size_limit() {
    let dir = std::env::temp_dir().join(format!("ocf-build-huge-{}", std::process::id()));
    fs::create_dir_all(dir.join("content")).unwrap();
    fs::write(dir.join("pack.yaml"), MANIFEST).unwrap();
    let huge = format!(
        "id: x\ntype: feature\nfields: {{ text: '{}' }}\n",
        "a".repeat(10 << 20)
    );
    fs::write(dir.join("content/huge.yaml"), huge).unwrap();
    let report = build_report(&dir, &BuildOptions::default());
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        summary(&report),
        ["content/huge.yaml safety-limit-exceeded maxFileBytes"]
    );
}

#[test]
fn an_alias_bomb_is_an_error() {
    let mut bomb = String::from(
        "- id: x\n  type: feature\n  fields:\n    a0: &a0 [x, x, x, x, x, x, x, x, x]\n",
    );
    for i in 1..9 {
        let refs = vec![format!("*a{}", i - 1); 9].join(", ");
        bomb.push_str(&format!("    a{i}: &a{i} [{refs}]\n"));
    }
    let report = build_files(&pack(&bomb), &BuildOptions::default());
    assert_eq!(
        summary(&report),
        ["content/items.yaml safety-limit-exceeded maxExpandedNodes"]
    );
    assert!(report.release.is_none());
}

#[test]
fn deep_nesting_is_an_error() {
    for deep in [
        format!("{}{}", "[".repeat(5000), "]".repeat(5000)),
        format!("{}x", "- ".repeat(5000)),
        (0..2000)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .collect(),
    ] {
        let report = build_files(&pack(&deep), &BuildOptions::default());
        let summary = summary(&report);
        assert_eq!(
            summary,
            ["content/items.yaml safety-limit-exceeded maxNesting"],
            "{}",
            &deep[..40]
        );
    }
}

#[test]
fn a_missing_manifest_and_an_empty_folder_are_problems() {
    let report = build_files(&[], &BuildOptions::default());
    assert_eq!(summary(&report), ["pack.yaml unreadable-file"]);
    let dir: PathBuf = std::env::temp_dir().join(format!("ocf-build-empty-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let report = build_report(&dir, &BuildOptions::default());
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(summary(&report), ["pack.yaml unreadable-file"]);
}

#[test]
fn a_long_extends_chain_is_cut_at_the_limit() {
    let mut content = String::new();
    for i in 0..40 {
        content.push_str(&format!(
            "- {{ id: f{i}, type: feature, extends: f{} }}\n",
            i + 1
        ));
    }
    content.push_str("- { id: f40, type: feature }\n");
    let report = build_files(&pack(&content), &BuildOptions::default());
    assert_eq!(
        summary(&report),
        ["content/items.yaml safety-limit-exceeded maxExtendsDepth"]
    );
}

/// A damaged copy of the tiny pack's content: bytes flipped, cut short, or a slice repeated.
fn damaged() -> impl Strategy<Value = String> {
    let len = CONTENT.len();
    prop_oneof![
        (0..len, any::<u8>()).prop_map(|(at, byte)| {
            let mut bytes = CONTENT.as_bytes().to_vec();
            bytes[at] = byte;
            String::from_utf8_lossy(&bytes).into_owned()
        }),
        (0..len).prop_map(|at| CONTENT[..at].to_owned()),
        (0..len, 0..len, 1..8usize).prop_map(|(a, b, times)| {
            let (from, to) = (a.min(b), a.max(b));
            let mut text = CONTENT[..to].to_owned();
            for _ in 0..times {
                text.push_str(&CONTENT[from..to]);
            }
            text.push_str(&CONTENT[to..]);
            text
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn damaged_packs_give_problems_not_panics(content in damaged()) {
        let report = build_files(&pack(&content), &BuildOptions::default());
        // A release only when nothing is an error; every problem names its file.
        let errors = report.problems.iter().filter(|p| p.is_error()).count();
        prop_assert_eq!(report.release.is_some(), errors == 0);
        for problem in &report.problems {
            prop_assert!(!problem.file.is_empty(), "{:?}", problem);
            prop_assert!(!problem.message.is_empty(), "{:?}", problem);
        }
    }
}
