//! `ocf act --apply`: the changes an action proposes for the character itself applied through
//! applyChanges, and the new file written.

mod support;

#[test]
fn second_wind_heals_the_fighter_and_the_file_says_so() {
    let dir = std::env::temp_dir().join(format!("ocf-act-apply-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fighter = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/characters/fighter-5.yaml"
    ))
    .unwrap()
    .replace("hp.current: 44", "hp.current: 20");
    let input = dir.join("fighter.yaml");
    let output = dir.join("healed.yaml");
    std::fs::write(&input, fighter).unwrap();
    let (text, code) = support::ocf(&[
        "act",
        input.to_str().unwrap(),
        "5e-srd-5.1:features.fighter.second-wind#second-wind",
        "--entry",
        "fighter",
        "--source",
        "5e-srd-5.1:features.fighter.second-wind",
        "--seed",
        "1",
        "--pack",
        "testdata/packs/5e-srd-5.1",
        "--apply",
        "-o",
        output.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    // Seed 1 rolls an 8: 1d10 + the fighter level 5 heals 13.
    assert!(text.contains("= 13"), "{text}");
    let healed = std::fs::read_to_string(&output).unwrap();
    // The file is the fighter's own text patched: its comments are kept.
    assert!(healed.starts_with("# Brother Aldric"), "{healed}");
    assert!(healed.contains("5e-srd-5.1:hp.current: 33"), "{healed}");
    assert!(
        healed.contains("5e-srd-5.1:secondWind.spent: 1"),
        "{healed}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
