//! `ocf apply -o` and `ocf act --apply` write a YAML character by patching its own text: what a
//! batch leaves alone stays as the author wrote it (comments, quoting, order, blank lines).

use expect_test::expect;

mod support;
use support::ocf;

/// The level-5 fighter written by hand, with comments everywhere a change could reach.
const FIGHTER: &str = "\
# Brother Aldric, level 5 (a copy of testdata/characters/fighter-5.yaml, commented)
id: aldric
specVersion: 1.0.0 # the spec this file is written for
packs:
  - { id: 5e-srd-5.1, version: 0.1.0 }

# Scores as rolled, before species and ASI.
values:
  5e-srd-5.1:abilities.str.score: 15 # rolled 15
  5e-srd-5.1:abilities.dex.score: 13
  5e-srd-5.1:abilities.con.score: 14
  5e-srd-5.1:abilities.int.score: 8
  5e-srd-5.1:abilities.wis.score: 12
  5e-srd-5.1:abilities.cha.score: 10
  5e-srd-5.1:hp.current: 44 # full

features:
  - id: fighter
    item: 5e-srd-5.1:classes.fighter
    state: { level: 5 }
    choices:
      skills: [{ option: skill.athletics }, { option: skill.perception }]
      features.fighter.fighting-style/style: [{ option: defense }]
      archetype: [{ option: '5e-srd-5.1:subclasses.champion' }]
      asi-1: [{ option: '5e-srd-5.1:improvements.plus-two', choices: { ability: [{ option: str }] } }]
  # Human: +1 to every score.
  - id: human
    item: \"5e-srd-5.1:species.human\"
    choices:
      language:
        - option: language.celestial # from the temple
  - { id: acolyte, item: 5e-srd-5.1:backgrounds.acolyte }

# What he carries.
inventory:
  - { id: chain-mail, item: 5e-srd-5.1:armor.chain-mail, equipped: true }
  # The shield goes in the batch below.
  - { id: shield, item: 5e-srd-5.1:armor.shield, equipped: true }
  - { id: longsword, item: 5e-srd-5.1:magic-items.longsword-plus-1, equipped: true } # +1
";

#[test]
fn a_batch_changes_only_what_it_changes() {
    let dir = std::env::temp_dir().join(format!("ocf-comments-kept-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("fighter.yaml");
    let batch = dir.join("batch.yaml");
    let output = dir.join("out.yaml");
    std::fs::write(&input, FIGHTER).unwrap();
    std::fs::write(
        &batch,
        "changes:
  - { type: set, field: hp.current, value: '30' }
  - { type: addItem, entry: { id: dagger, item: \"'5e-srd-5.1:weapons.dagger'\", quantity: '2' } }
  - { type: removeItem, entry: shield }
  - { type: unchoose, path: { entry: human, choice: [language] } }
  - { type: choose, path: { entry: human, choice: [language] }, option: \"'language.dwarvish'\" }
  - { type: setState, entry: fighter, key: level, value: '6' }
",
    )
    .unwrap();
    let (text, code) = ocf(&[
        "apply",
        input.to_str().unwrap(),
        batch.to_str().unwrap(),
        "--pack",
        "testdata/packs/5e-srd-5.1",
        "-o",
        output.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("written whole"), "{text}");
    let written = std::fs::read_to_string(&output).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    expect![[r##"
        # Brother Aldric, level 5 (a copy of testdata/characters/fighter-5.yaml, commented)
        id: aldric
        specVersion: 1.0.0 # the spec this file is written for
        packs:
          - { id: 5e-srd-5.1, version: 0.1.0 }

        # Scores as rolled, before species and ASI.
        values:
          5e-srd-5.1:abilities.str.score: 15 # rolled 15
          5e-srd-5.1:abilities.dex.score: 13
          5e-srd-5.1:abilities.con.score: 14
          5e-srd-5.1:abilities.int.score: 8
          5e-srd-5.1:abilities.wis.score: 12
          5e-srd-5.1:abilities.cha.score: 10
          5e-srd-5.1:hp.current: 30 # full

        features:
          - id: fighter
            item: 5e-srd-5.1:classes.fighter
            state: { level: 6 }
            choices:
              skills: [{ option: skill.athletics }, { option: skill.perception }]
              features.fighter.fighting-style/style: [{ option: defense }]
              archetype: [{ option: '5e-srd-5.1:subclasses.champion' }]
              asi-1: [{ option: '5e-srd-5.1:improvements.plus-two', choices: { ability: [{ option: str }] } }]
          # Human: +1 to every score.
          - id: human
            item: "5e-srd-5.1:species.human"
            choices:
              language:
                - option: language.dwarvish # from the temple
          - { id: acolyte, item: 5e-srd-5.1:backgrounds.acolyte }

        # What he carries.
        inventory:
          - { id: chain-mail, item: 5e-srd-5.1:armor.chain-mail, equipped: true }
          # The shield goes in the batch below.
          - { id: longsword, item: 5e-srd-5.1:magic-items.longsword-plus-1, equipped: true } # +1
          - { id: dagger, item: '5e-srd-5.1:weapons.dagger', quantity: 2 }
    "##]].assert_eq(&written);
}
