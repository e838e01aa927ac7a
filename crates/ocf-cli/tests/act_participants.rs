//! `ocf act --participant ROLE=CHARACTER --apply`: each participant's view read from its own
//! computed sheet, each handoff run on the participant's own character in the same process, and
//! each character's changes applied to its own file (EA "Starting an action" 4, "Handoffs").

mod support;

use std::path::{Path, PathBuf};

/// The dragon and three goblins (`goblin-1` … `goblin-3`) copied into a fresh folder.
fn cast(name: &str) -> (PathBuf, PathBuf, Vec<PathBuf>) {
    let dir = std::env::temp_dir().join(format!("ocf-act-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let chars = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/characters");
    let dragon = dir.join("dragon.yaml");
    std::fs::copy(chars.join("adult-red-dragon.yaml"), &dragon).unwrap();
    let goblin = std::fs::read_to_string(chars.join("goblin.yaml")).unwrap();
    let goblins = (1..=3)
        .map(|i| {
            let path = dir.join(format!("goblin-{i}.yaml"));
            std::fs::write(
                &path,
                goblin.replace("id: goblin-1", &format!("id: goblin-{i}")),
            )
            .unwrap();
            path
        })
        .collect();
    (dir, dragon, goblins)
}

fn act(dragon: &Path, action: &str, goblins: &[PathBuf], seed: &str) -> (String, i32) {
    let mut args = vec![
        "act".to_owned(),
        dragon.display().to_string(),
        format!("5e-srd-5.1:monsters.adult-red-dragon#{action}"),
        "--entry".into(),
        "dragon".into(),
        "--seed".into(),
        seed.into(),
        "--pack".into(),
        "testdata/packs/5e-srd-5.1".into(),
        "--apply".into(),
    ];
    for g in goblins {
        args.push("--participant".into());
        args.push(format!("target={}", g.display()));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    support::ocf(&args)
}

#[test]
fn fire_breath_hands_each_save_to_its_goblin_and_burns_each_goblin_file() {
    let (dir, dragon, goblins) = cast("breath");
    let (text, code) = act(&dragon, "fire-breath", &goblins, "9");
    assert_eq!(code, 0, "{text}");
    // Seed 9: 18d6 rolls 67; goblin-1's own Dexterity save (1d20 + 2) meets DC 21, the others don't.
    assert!(
        text.contains("saves[0]: goblin-1 runs 5e-srd-5.1:saving-throw"),
        "{text}"
    );
    assert!(text.contains("saves.dex.mod"), "{text}");
    assert!(
        text.contains(r#"propose to target "goblin-1": {"type":"adjust","field":"5e-srd-5.1:hp.current","by":-33,"tags":["damage","damage.fire"]}"#),
        "{text}"
    );
    assert!(text.contains(r#"propose to target "goblin-2": {"type":"adjust","field":"5e-srd-5.1:hp.current","by":-67"#), "{text}");
    for g in &goblins {
        let file = std::fs::read_to_string(g).unwrap();
        // Hit points never go below 0 (the goblin's own applyChanges).
        assert!(file.contains("5e-srd-5.1:hp.current: 0"), "{file}");
    }
    let file = std::fs::read_to_string(&dragon).unwrap();
    assert!(file.contains("fireBreathSpent: true"), "{file}");
    assert!(file.contains("5e-srd-5.1:hp.current: 256"), "{file}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn frightful_presence_frightens_each_goblin_that_fails_in_its_own_file() {
    let (dir, dragon, goblins) = cast("fear");
    let (text, code) = act(&dragon, "frightful-presence", &goblins[..2], "1");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("saves.wis.mod"), "{text}");
    for g in &goblins[..2] {
        let file = std::fs::read_to_string(g).unwrap();
        assert!(file.contains("5e-srd-5.1:conditions.frightened"), "{file}");
        assert!(file.contains("red-dragon-1"), "{file}");
    }
    // The third goblin took no part: its file is untouched.
    let file = std::fs::read_to_string(&goblins[2]).unwrap();
    assert!(!file.contains("frightened"), "{file}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_handed_off_field_parameter_is_checked_on_the_participants_own_sheet() {
    // EA "Handoffs" 1 types the params at the handoff; the field parameter's `where` is the
    // participant's own run's (EA "Starting an action" 2): `coin` has no `check` tag there.
    let dir = std::env::temp_dir().join(format!("ocf-act-field-param-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (pc, orc) = (dir.join("pc.yaml"), dir.join("orc.yaml"));
    std::fs::write(&pc, "id: pc\nspecVersion: 1.0.0\n").unwrap();
    std::fs::write(&orc, "id: orc\nspecVersion: 1.0.0\n").unwrap();
    let (text, code) = support::ocf(&[
        "act",
        &pc.display().to_string(),
        "core:challenge-check",
        "--pack",
        "testdata/conformance-packs/actions-core",
        "--participant",
        &format!("target={}", orc.display()),
    ]);
    assert_ne!(code, 0, "{text}");
    assert!(text.contains("invalid-option"), "{text}");
    assert!(
        text.contains("in orc's own run of core:check, handed off at step `checks[0]`"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
