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
            Level total 5 · Ac 19 · Hp current 44 / 44 · Proficiency bonus +3

            Abilities
              Str score 18 +4
              Dex score 14 +2
              Con score 15 +2
              Int score 9 -1
              Wis score 13 +1
              Cha score 11 +0

            Saves
              Str mod +7 ●
              Dex mod +2 ○
              Con mod +5 ●
              Int mod -1 ○
              Wis mod +1 ○
              Cha mod +0 ○

            Skills
              Acrobatics mod +2 ○○
              Animal handling mod +1 ○○
              Arcana mod -1 ○○
              Athletics mod +7 ●○
              Deception mod +0 ○○
              History mod -1 ○○
              Insight mod +4 ●○
              Intimidation mod +0 ○○
              Investigation mod -1 ○○
              Medicine mod +1 ○○
              Nature mod -1 ○○
              Perception mod +4 ●○
              Performance mod +0 ○○
              Persuasion mod +0 ○○
              Religion mod +2 ●○
              Sleight of hand mod +2 ○○
              Stealth mod +2 ○○
              Survival mod +1 ○○

            Combat
              Initiative +2
              Attacks 2
              Crit range 19
              Perception 14

            Speed
              Walk 30

            Proficiencies
              Thieves tools mod +2 ○○
              Weapons weapon.martial, weapon.simple
              Armor armor.heavy, armor.light, armor.medium, armor.shield

            Classes
              Fighter

            Features
              Fighting style
              Second wind
              Action surge
              Extra attack
              Improved critical
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
