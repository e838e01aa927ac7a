//! `ocf sheet` as a player reads it (issue 37): names from the packs' texts in the asked locale
//! with its fallbacks, values shown and grouped by the display hints.

use expect_test::{Expect, expect};

mod support;
use support::ocf;

fn check(args: &[&str], expect: Expect) {
    let (text, status) = ocf(args);
    assert_eq!(status, 0, "{text}");
    expect.assert_eq(&text);
}

#[test]
fn the_fighter_reads_as_a_player_would_say_it() {
    check(
        &["sheet", "testdata/characters/fighter-5.yaml"],
        expect![[r#"
            Level 5 · Armor Class 19 · Hit Points 44 / 44 · Proficiency Bonus +3 · Initiative +2 · Speed 30 · Passive Perception 14

            Ability Scores
              Strength 18 +4
              Dexterity 14 +2
              Constitution 15 +2
              Intelligence 9 -1
              Wisdom 13 +1
              Charisma 11 +0

            Saving Throws
              Strength saving throw +7 ●
              Dexterity saving throw +2 ○
              Constitution saving throw +5 ●
              Intelligence saving throw -1 ○
              Wisdom saving throw +1 ○
              Charisma saving throw +0 ○

            Skills
              Acrobatics +2 ○○
              Animal Handling +1 ○○
              Arcana -1 ○○
              Athletics +7 ●○
              Deception +0 ○○
              History -1 ○○
              Insight +4 ●○
              Intimidation +0 ○○
              Investigation -1 ○○
              Medicine +1 ○○
              Nature -1 ○○
              Perception +4 ●○
              Performance +0 ○○
              Persuasion +0 ○○
              Religion +2 ●○
              Sleight of Hand +2 ○○
              Stealth +2 ○○
              Survival +1 ○○

            Combat
              Attacks per Attack action 2
              Critical hit range 19

            Speed
              Size medium

            Proficiencies
              Thieves' tools +2 ○○
              Weapon proficiencies Martial weapons, Simple weapons
              Armor proficiencies Heavy armor, Light armor, Medium armor, Shields
              Languages Celestial, Common

            Class Resources
              Second Wind 1 / 1
              Action Surge 1 / 1

            Species
              Human

            Classes
              Fighter

            Features
              Fighting Style
              Second Wind
              Action Surge
              Extra Attack
              Improved Critical
              Shelter of the Faithful
        "#]],
    );
}

#[test]
fn a_locale_falls_back_to_its_language_then_the_default() {
    let knight = "testdata/test-packs/i18n-core/knight.yaml";
    let pack = "testdata/test-packs/i18n-core";
    check(
        &["sheet", knight, "--pack", pack],
        expect![[r#"
        Hit Points 8 / 8

        Stats
          Might modifier +2 ●○

        Health
          Stress ■■■□□□□□□ 3/9

        To choose
          Choose your oath
    "#]],
    );
    check(
        &["sheet", knight, "--pack", pack, "--lang", "pt-BR"],
        expect![[r#"
            Pontos de Vida (PV) 8 / 8

            Stats
              Might modifier +2 ●○

            Health
              Stress ■■■□□□□□□ 3/9

            To choose
              Choose your oath
        "#]],
    );
}
