//! Translation files in the editor (issue 37): text keys completed, hovered and followed to what
//! they name, a declared thing's name on hover, the build's text checks as diagnostics, and the
//! quick fix of a `missing-text` warning.

mod support;

use expect_test::expect;
use serde_json::{Value, json};
use support::{Client, check};

fn start() -> Client {
    Client::start_in(support::fixtures().parent().unwrap().join("texts"))
}

fn hover_text(value: &Value) -> String {
    format!(
        "{}\n",
        value["contents"]["value"].as_str().unwrap_or("<none>")
    )
}

#[test]
fn keys_are_completed_with_what_they_name() {
    let mut c = start();
    c.open_text("tale/i18n/pt.yaml", "fields.str.score.name: Força\nf");
    let items = c.at(
        "textDocument/completion",
        "tale/i18n/pt.yaml",
        1,
        1,
        json!({}),
    );
    let mut list: Vec<(String, String)> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["sortText"].as_str().unwrap().to_owned(),
                format!(
                    "{} | {} | {}",
                    i["label"].as_str().unwrap(),
                    i["detail"].as_str().unwrap(),
                    i["documentation"]
                        .as_str()
                        .unwrap_or("")
                        .trim_end()
                        .replace('\n', "; ")
                ),
            )
        })
        .collect();
    list.sort();
    let rendered: String = list.into_iter().map(|(_, l)| l + "\n").collect();
    check(
        rendered,
        expect![[r#"
        fields.str.mod.abbr | abbr of field `str.mod` | 
        fields.str.mod.description | description of field `str.mod` | 
        fields.str.mod.name | name of field `str.mod` | 
        fields.str.score.abbr | abbr of field `str.score` | 
        fields.str.score.description | description of field `str.score` | 
        fields.str.score.name | name of field `str.score` (already given) | en: Strength
    "#]],
    );
    // The edit replaces what was typed with the key.
    let first = &items.as_array().unwrap()[0]["textEdit"];
    check(
        format!("{first}\n"),
        expect![[r#"
        {"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":1}},"newText":"fields.str.score.name: "}
    "#]],
    );
    // Not inside a value.
    let none = c.at(
        "textDocument/completion",
        "tale/i18n/pt.yaml",
        0,
        25,
        json!({}),
    );
    check(
        format!("{none}\n"),
        expect![[r#"
        []
    "#]],
    );
}

#[test]
fn a_key_hovers_with_its_thing_arguments_and_default_text_and_leads_to_it() {
    let mut c = start();
    c.open("tale/i18n/pt.yaml");
    let hover = c.at("textDocument/hover", "tale/i18n/pt.yaml", 0, 3, json!({}));
    check(
        hover_text(&hover),
        expect![[r#"
        ```
        fields.str.score.name
        ```
        the name of field `str.score` (required in `en`)

        arguments: none

        en: Strength
    "#]],
    );
    c.open_text(
        "tale/i18n/pt.yaml",
        "types.weapon.name: \"{count, plural, one {Arma} other {Armas}}\"\nsword.name: Espada\nfields.nope.name: Nada\n",
    );
    let hover = c.at("textDocument/hover", "tale/i18n/pt.yaml", 0, 3, json!({}));
    check(
        hover_text(&hover),
        expect![[r#"
        ```
        types.weapon.name
        ```
        the name of content type `weapon` (required in `en`)

        arguments: `count`

        en: {count, plural, one {Weapon} other {Weapons}}
    "#]],
    );
    let hover = c.at("textDocument/hover", "tale/i18n/pt.yaml", 2, 3, json!({}));
    check(
        hover_text(&hover),
        expect![[r#"
        ```
        fields.nope.name
        ```
        names nothing the pack or its dependencies declare
    "#]],
    );
    let mut places = String::new();
    for line in 0..3 {
        let found = c.at(
            "textDocument/definition",
            "tale/i18n/pt.yaml",
            line,
            2,
            json!({}),
        );
        places.push_str(&format!("{line}: {}", c.locations(&found)));
        if found.is_null() {
            places.push('\n');
        }
    }
    check(
        places,
        expect![[r#"
        0: tale/rules/rules.yaml 7:2-7:8
        1: tale/content/sword.yaml 0:4-0:9
        2: 
    "#]],
    );
}

#[test]
fn an_id_hovers_with_its_name() {
    let mut c = start();
    c.open("tale/rules/rules.yaml");
    // `str.score` read in str.mod's formula; `str.mod` has no text (its readable ID is not shown).
    let hover = c.at(
        "textDocument/hover",
        "tale/rules/rules.yaml",
        5,
        22,
        json!({}),
    );
    check(
        hover_text(&hover),
        expect![[r#"
        field `str.score`

        name: **Strength (en)**

        declared in `tale`, rules/rules.yaml:3
        ```yaml
        type: integer
        input: true
        default: 10
        tags: [ability]
        ```
    "#]],
    );
    c.open("tale/content/sword.yaml");
    let hover = c.at(
        "textDocument/hover",
        "tale/content/sword.yaml",
        1,
        8,
        json!({}),
    );
    check(
        hover_text(&hover),
        expect![[r#"
        content type `weapon`

        name: **Weapon (en)**

        declared in `tale`, rules/rules.yaml:8
        ```yaml
        fields: {…}
        ```
    "#]],
    );
}

#[test]
fn the_builds_text_checks_reach_the_editor() {
    let mut c = start();
    c.open_text(
        "tale/i18n/pt.yaml",
        "fields.str.score.name: Força\nfields.nope.name: Nada\nsword.name: \"Espada {\"\ntypes.weapon.name: \"{n} armas\"\n",
    );
    check(
        c.take_published(),
        expect![[r#"
        tale/i18n/pt.yaml:
          1:0-1:16 error unknown-text-key: `fields.nope.name` names nothing the pack or its dependencies declare
          2:21-2:22 error invalid-message: `sword.name`: Expected ICU identifier (ICU MessageFormat)
          3:20-3:30 error unknown-message-argument: `types.weapon.name` uses the argument `n`, which its key does not give (it gives `count`)
    "#]],
    );
    c.open("tale/rules/rules.yaml");
    check(
        c.take_published(),
        expect![[r#"
        tale/rules/rules.yaml:
          3:2-3:9 warning missing-text: `fields.str.mod.name` has no text in the pack's default locale `en`
    "#]],
    );
}

#[test]
fn a_missing_text_is_added_to_the_default_locale_file() {
    let mut c = start();
    c.open("tale/rules/rules.yaml");
    c.take_published();
    let actions = c.request(
        "textDocument/codeAction",
        json!({
            "textDocument": { "uri": c.uri("tale/rules/rules.yaml") },
            "range": { "start": { "line": 3, "character": 2 }, "end": { "line": 3, "character": 2 } },
            "context": { "diagnostics": [] },
        }),
    );
    let mut out = String::new();
    for a in actions.as_array().unwrap() {
        out.push_str(&format!("{}\n", a["title"].as_str().unwrap()));
        for (uri, edits) in a["edit"]["changes"].as_object().unwrap() {
            let file = uri.rsplit("/texts/").next().unwrap();
            for e in edits.as_array().unwrap() {
                out.push_str(&format!(
                    "  {file} {} {:?}\n",
                    e["range"]["start"],
                    e["newText"].as_str().unwrap()
                ));
            }
        }
    }
    check(
        out,
        expect![[r#"
        Add `fields.str.mod.name` to i18n/en.yaml
          tale/i18n/en.yaml {"line":4,"character":0} "fields.str.mod.name: Str mod\n"
    "#]],
    );
}

#[test]
fn a_translation_pack_gives_its_dependencys_keys_qualified() {
    let mut c = start();
    c.open_text(
        "tale-pt/i18n/pt.yaml",
        "tale:fields.str.score.name: Força\ntale:sw",
    );
    check(
        c.take_published(),
        expect![[r#"
        tale-pt/i18n/pt.yaml:
          1:7-1:7 error invalid-yaml: simple key expected
    "#]],
    );
    let items = c.at(
        "textDocument/completion",
        "tale-pt/i18n/pt.yaml",
        1,
        7,
        json!({}),
    );
    let labels: String = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            format!(
                "{} | {}\n",
                i["label"].as_str().unwrap(),
                i["detail"].as_str().unwrap()
            )
        })
        .collect();
    check(
        labels,
        expect![[r#"
        tale:sword.name | name of weapon `sword`
        tale:sword.description | description of weapon `sword`
    "#]],
    );
    c.open("tale-pt/i18n/pt.yaml");
    let hover = c.at(
        "textDocument/hover",
        "tale-pt/i18n/pt.yaml",
        0,
        8,
        json!({}),
    );
    check(
        hover_text(&hover),
        expect![[r#"
        ```
        tale:fields.str.score.name
        ```
        the name of field `str.score` (required in `en`)

        arguments: none

        en: Strength
    "#]],
    );
    let found = c.at(
        "textDocument/definition",
        "tale-pt/i18n/pt.yaml",
        0,
        8,
        json!({}),
    );
    check(
        c.locations(&found),
        expect![[r#"
        tale/rules/rules.yaml 2:2-2:11
    "#]],
    );
}
