//! `ocf act`, bounded and atomic: `--apply` writes nothing unless every character's batch applies;
//! answers and participant view lists are read within the character files' limits, with coded
//! errors; answers left over are `answer-mismatch`; a `--param` the action doesn't declare, or a
//! number that isn't finite, is refused (by `ocf odds` too, which takes the same arguments).

mod support;

use std::path::{Path, PathBuf};

/// A pack whose `duel` proposes a change the actor can take and one its target can't (a computed
/// field), and the actor's and the target's files.
fn setup(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("ocf-act-bounded-{name}-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("pack/rules")).unwrap();
    std::fs::write(
        dir.join("pack/pack.yaml"),
        "id: atomic\nversion: 1.0.0\nspecVersion: 1.0.0\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("pack/rules/rules.yaml"),
        r#"fields:
  hp: {type: integer, default: 10, input: true}
  armor: {type: integer, formula: '3'}
actions:
  - id: duel
    params:
      dc: {type: integer, default: 10}
    participants: { target: {} }
    steps:
      - id: tire
        kind: changes
        changes: [{ type: adjust, field: hp, by: -1 }]
      - id: strike
        kind: changes
        to: target
        changes: [{ type: adjust, field: armor, by: -2 }]
  - id: rest
    steps:
      - id: heal
        kind: changes
        changes: [{ type: adjust, field: hp, by: 1 }]
"#,
    )
    .unwrap();
    let pc = dir.join("pc.yaml");
    std::fs::write(&pc, "# my fighter, commented\nid: pc\nspecVersion: 1.0.0\n").unwrap();
    let orc = dir.join("orc.yaml");
    std::fs::write(&orc, "id: orc\nspecVersion: 1.0.0\n").unwrap();
    (dir, pc, orc)
}

fn act(dir: &Path, pc: &Path, action: &str, more: &[&str]) -> (String, i32) {
    run("act", dir, pc, action, more)
}

/// `ocf COMMAND` (`act` or `odds`) on the pack's action.
fn run(command: &str, dir: &Path, pc: &Path, action: &str, more: &[&str]) -> (String, i32) {
    let pack = dir.join("pack");
    let mut args = vec![
        command.to_owned(),
        pc.display().to_string(),
        format!("atomic:{action}"),
        "--pack".to_owned(),
        pack.display().to_string(),
    ];
    args.extend(more.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    support::ocf(&args)
}

#[test]
fn a_participants_failing_batch_writes_no_file() {
    let (dir, pc, orc) = setup("atomic");
    let (before_pc, before_orc) = (
        std::fs::read_to_string(&pc).unwrap(),
        std::fs::read_to_string(&orc).unwrap(),
    );
    let target = format!("target={}", orc.display());
    let (text, code) = act(&dir, &pc, "duel", &["--participant", &target, "--apply"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("not-input-field"), "{text}");
    assert!(text.contains("no file written"), "{text}");
    // The actor's batch applied, but its file is as it was: comments and all.
    assert_eq!(std::fs::read_to_string(&pc).unwrap(), before_pc);
    assert_eq!(std::fs::read_to_string(&orc).unwrap(), before_orc);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn answers_left_over_are_answer_mismatch() {
    let (dir, pc, _) = setup("left-over");
    let answers = dir.join("answers.yaml");
    std::fs::write(&answers, "- { faces: [3] }\n").unwrap();
    let (text, code) = act(&dir, &pc, "rest", &["--answers", answers.to_str().unwrap()]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("answer-mismatch"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn answers_and_view_lists_are_read_within_the_character_limits() {
    let (dir, pc, _) = setup("limits");
    let answers = dir.join("answers.yaml");
    let refusal = |text: &str| {
        std::fs::write(&answers, text).unwrap();
        act(&dir, &pc, "rest", &["--answers", answers.to_str().unwrap()])
    };
    let (text, code) = refusal("- { option: a, option: b }\n");
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("answers.yaml:1:16: invalid-document: duplicate"),
        "{text}"
    );
    let (text, code) = refusal(&format!("{}{}\n", "[".repeat(5000), "]".repeat(5000)));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("safety-limit-exceeded"), "{text}");
    assert!(text.len() < 400, "no dump of the file: {text}");
    let (text, code) = refusal("- { faces: 3 }\n");
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("answers.yaml:1:12: invalid-document"),
        "{text}"
    );
    // A participant's list of views: a value written twice is refused, not last-wins.
    let views = dir.join("views.yaml");
    std::fs::write(&views, "- { id: x, values: { hp: 1, hp: 2 } }\n").unwrap();
    let target = format!("target={}", views.display());
    let (text, code) = act(&dir, &pc, "duel", &["--participant", &target]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("views.yaml:1:29: invalid-document: duplicate key `hp`"),
        "{text}"
    );
    // A participant's character file with a problem: its code and place, no Rust debug dump.
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, "id: orc\nid: orc\nspecVersion: 1.0.0\n").unwrap();
    let target = format!("target={}", bad.display());
    let (text, code) = act(&dir, &pc, "duel", &["--participant", &target]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("bad.yaml:"), "{text}");
    assert!(text.contains("invalid-document"), "{text}");
    assert!(!text.contains("Problem {"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_undeclared_or_non_finite_param_is_refused() {
    let (dir, pc, _) = setup("params");
    let (text, code) = act(&dir, &pc, "duel", &["--param", "targetAC=25"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("unknown-param"), "{text}");
    assert!(
        text.contains("`targetAC`") && text.contains("declares: dc"),
        "{text}"
    );
    let (text, code) = act(&dir, &pc, "duel", &["--param", "dc=.nan"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("invalid-value"), "{text}");
    // `ocf odds` takes the same arguments and refuses the same way, with the code in its JSON.
    let (text, code) = run("odds", &dir, &pc, "rest", &["--param", "dc=3", "--json"]);
    assert_eq!(code, 1, "{text}");
    let error: serde_json::Value = serde_json::from_str(&text).expect(&text);
    assert_eq!(error["error"]["code"], "unknown-param", "{text}");
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("`dc`") && m.contains("declares: none")),
        "{text}"
    );
    let (text, code) = run("odds", &dir, &pc, "duel", &["--param", "dc=12"]);
    assert_eq!(code, 0, "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
