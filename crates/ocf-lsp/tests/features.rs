//! What pack authors expect beyond diagnostics, hover, definition and completion (issue 41):
//! each feature asked as an editor asks it, the answer rendered.

mod support;

use expect_test::expect;
use serde_json::{Value, json};
use support::{Client, check};

/// A workspace edit as `file line:col-line:col -> text`, files and edits in order.
fn edits(c: &Client, value: &Value) -> String {
    let mut out = Vec::new();
    let changes = value["changes"].as_object().cloned().unwrap_or_default();
    for (uri, list) in changes {
        let path = url::Url::parse(&uri).unwrap().to_file_path().unwrap();
        let file = path.strip_prefix(&c.root).unwrap().display().to_string();
        for e in list.as_array().unwrap() {
            let r = &e["range"];
            out.push(format!(
                "{file} {}:{}-{}:{} -> {:?}",
                r["start"]["line"],
                r["start"]["character"],
                r["end"]["line"],
                r["end"]["character"],
                e["newText"].as_str().unwrap_or_default()
            ));
        }
    }
    out.sort();
    out.join("\n") + "\n"
}

#[test]
fn rename_a_field_across_files_and_dependent_packs() {
    let mut c = Client::start();
    c.open("homebrew/rules/attack.yaml");
    // `str.mod` read in homebrew, declared in base.
    let prepared = c.at(
        "textDocument/prepareRename",
        "homebrew/rules/attack.yaml",
        3,
        15,
        json!({}),
    );
    check(
        format!("{}\n", prepared["placeholder"]),
        expect![[r#"
            "str.mod"
        "#]],
    );
    let renamed = c.at(
        "textDocument/rename",
        "homebrew/rules/attack.yaml",
        3,
        15,
        json!({ "newName": "str.modifier" }),
    );
    check(
        edits(&c, &renamed),
        expect![[r#"
            base/rules/abilities.yaml 3:2-3:9 -> "str.modifier"
            homebrew/rules/attack.yaml 3:13-3:20 -> "str.modifier"
            homebrew/rules/attack.yaml 6:18-6:25 -> "str.modifier"
        "#]],
    );
    // A content item, referenced qualified from the dependent pack: its local part.
    let renamed = c.at(
        "textDocument/rename",
        "base/content/sword.yaml",
        0,
        5,
        json!({ "newName": "blade" }),
    );
    check(
        edits(&c, &renamed),
        expect![[r#"
            base/content/sword.yaml 0:4-0:9 -> "blade"
            homebrew/content/axe.yaml 2:14-2:19 -> "blade"
        "#]],
    );
    // A tag, declared in a flow list and used in others.
    let renamed = c.at(
        "textDocument/rename",
        "base/rules/abilities.yaml",
        0,
        8,
        json!({ "newName": "stat" }),
    );
    check(
        edits(&c, &renamed),
        expect![[r#"
            base/rules/abilities.yaml 0:7-0:14 -> "stat"
            base/rules/abilities.yaml 2:80-2:87 -> "stat"
            base/rules/abilities.yaml 6:11-6:18 -> "stat"
        "#]],
    );
    let refused = c.at(
        "textDocument/rename",
        "base/rules/abilities.yaml",
        0,
        8,
        json!({ "newName": "two words" }),
    );
    check(
        format!("{}\n", refused["error"]["code"]),
        expect![[r#"
            -32602
        "#]],
    );
}

#[test]
fn quick_fixes_for_each_did_you_mean_and_missing_declarations() {
    let mut c = Client::start();
    let mut out = String::new();
    // An unknown key the build suggests a key for; an unknown field a formula reads.
    for (text, line, col) in [
        (
            "fields:\n  attack.bonus:\n    type: integer\n    formual: 1\n",
            3,
            5,
        ),
        (
            "fields:\n  attack.bonus:\n    type: integer\n    formula: str.mdo + 2\n",
            3,
            16,
        ),
    ] {
        c.open_text("homebrew/rules/attack.yaml", text);
        let actions = c.request(
            "textDocument/codeAction",
            json!({
                "textDocument": { "uri": c.uri("homebrew/rules/attack.yaml") },
                "range": { "start": { "line": line, "character": col }, "end": { "line": line, "character": col } },
                "context": { "diagnostics": [] },
            }),
        );
        for action in actions.as_array().unwrap() {
            out.push_str(&format!(
                "{} [{}]\n{}",
                action["title"].as_str().unwrap(),
                action["diagnostics"][0]["code"]
                    .as_str()
                    .unwrap_or_default(),
                edits(&c, &action["edit"])
            ));
        }
    }
    c.open_text(
        "base/content/sword.yaml",
        "id: sword\ntype: weapon\ntags: [weapn]\n",
    );
    let actions = c.request(
        "textDocument/codeAction",
        json!({
            "textDocument": { "uri": c.uri("base/content/sword.yaml") },
            "range": { "start": { "line": 2, "character": 8 }, "end": { "line": 2, "character": 8 } },
            "context": { "diagnostics": [] },
        }),
    );
    for action in actions.as_array().unwrap() {
        out.push_str(&format!(
            "{}\n{}",
            action["title"].as_str().unwrap(),
            edits(&c, &action["edit"])
        ));
    }
    check(
        out,
        expect![[r#"
            Replace with `formula` [unknown-key]
            homebrew/rules/attack.yaml 3:4-3:11 -> "formula"
            Did you mean `str.mod`? Replace `str.mdo` [formula-error]
            homebrew/rules/attack.yaml 3:13-3:20 -> "str.mod"
            Declare the field `str.mdo` [formula-error]
            homebrew/rules/attack.yaml 3:24-3:24 -> "\n  str.mdo:\n    type: integer"
            Did you mean `weapon`? Replace `weapn`
            base/content/sword.yaml 2:7-2:12 -> "weapon"
            Declare the tag `weapn`
            base/rules/abilities.yaml 0:22-0:22 -> ", weapn"
        "#]],
    );
}

#[test]
fn highlight_symbols_folding_and_selection() {
    let mut c = Client::start();
    c.open("base/rules/abilities.yaml");
    let highlights = c.at(
        "textDocument/documentHighlight",
        "base/rules/abilities.yaml",
        5,
        25,
        json!({}),
    );
    let rendered: Vec<String> = highlights
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let r = &h["range"];
            format!(
                "{}:{}-{}:{} {}",
                r["start"]["line"],
                r["start"]["character"],
                r["end"]["line"],
                r["end"]["character"],
                h["kind"]
            )
        })
        .collect();
    let symbols = c.request("workspace/symbol", json!({ "query": "POTION" }));
    let names: Vec<String> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| format!("{} ({})", s["name"].as_str().unwrap(), s["containerName"]))
        .collect();
    let folding = c.request(
        "textDocument/foldingRange",
        json!({ "textDocument": { "uri": c.uri("base/rules/abilities.yaml") } }),
    );
    let folds: Vec<String> = folding
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{}-{}", f["startLine"], f["endLine"]))
        .collect();
    let selection = c.request(
        "textDocument/selectionRange",
        json!({ "textDocument": { "uri": c.uri("base/rules/abilities.yaml") },
                "positions": [{ "line": 5, "character": 25 }] }),
    );
    let mut chain = Vec::new();
    let mut at = &selection[0];
    while at.is_object() {
        let r = &at["range"];
        chain.push(format!(
            "{}:{}-{}:{}",
            r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"]
        ));
        at = &at["parent"];
    }
    check(
        format!(
            "highlights: {}\nsymbols: {}\nfolding: {}\nselection: {}\n",
            rendered.join(", "),
            names.join(", "),
            folds.join(", "),
            chain.join(" < ")
        ),
        expect![[r#"
            highlights: 2:2-2:11 3, 5:20-5:29 2
            symbols: potion ("base"), potion.healing ("base"), potion.template ("base")
            folding: 0-10, 1-6, 3-6, 7-10, 8-10, 9-10
            selection: 5:20-5:29 < 5:13-5:40 < 5:4-5:40 < 4:4-7:0 < 3:2-7:0 < 2:2-7:0 < 1:0-7:0 < 0:0-11:0
        "#]],
    );
}

#[test]
fn signature_help_tokens_and_inlay_hints_in_formulas() {
    let mut c = Client::start();
    c.open_text(
        "homebrew/rules/attack.yaml",
        "fields:\n  attack.bonus:\n    type: integer\n    formula: max(str.mod, 'a') + 2\n",
    );
    let mut out = String::new();
    for col in [17, 26] {
        let help = c.at(
            "textDocument/signatureHelp",
            "homebrew/rules/attack.yaml",
            3,
            col,
            json!({}),
        );
        out.push_str(&format!(
            "signature at {col}: {} (parameter {})\n",
            help["signatures"][0]["label"], help["activeParameter"]
        ));
    }
    let tokens = c.request(
        "textDocument/semanticTokens/full",
        json!({ "textDocument": { "uri": c.uri("homebrew/rules/attack.yaml") } }),
    );
    out.push_str(&format!("tokens: {}\n", tokens["data"]));
    let hints = c.request(
        "textDocument/inlayHint",
        json!({ "textDocument": { "uri": c.uri("homebrew/rules/attack.yaml") },
                "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 9, "character": 0 } } }),
    );
    for hint in hints.as_array().unwrap() {
        out.push_str(&format!(
            "hint at {}:{}: {}\n",
            hint["position"]["line"], hint["position"]["character"], hint["label"]
        ));
    }
    check(
        out,
        expect![[r#"
            signature at 17: "max(a, b, ...) -> number" (parameter 0)
            signature at 26: "max(a, b, ...) -> number" (parameter 1)
            tokens: [3,13,3,0,0,0,4,7,2,0,0,9,3,4,0,0,7,1,3,0]
            hint at 3:24: ": integer"
        "#]],
    );
}

#[test]
fn pull_diagnostics_of_a_file_and_of_the_whole_workspace() {
    let mut c = Client::start();
    // Nothing is open: the workspace's problems are still there for the asking.
    let document = c.request(
        "textDocument/diagnostic",
        json!({ "textDocument": { "uri": c.uri("homebrew/rules/attack.yaml") } }),
    );
    let workspace = c.request("workspace/diagnostic", json!({ "previousResultIds": [] }));
    let mut out = format!(
        "document: {} {}\n",
        document["kind"], document["items"][0]["message"]
    );
    for item in workspace["items"].as_array().unwrap() {
        let path = url::Url::parse(item["uri"].as_str().unwrap())
            .unwrap()
            .to_file_path()
            .unwrap();
        let file = path.strip_prefix(&c.root).unwrap().display().to_string();
        out.push_str(&format!(
            "workspace: {file}: {} problem(s)\n",
            item["items"].as_array().unwrap().len()
        ));
    }
    check(
        out,
        expect![[r#"
            document: "full" "type-mismatch: max() takes at least 2 arguments, found 1"
            workspace: homebrew/rules/attack.yaml: 1 problem(s)
        "#]],
    );
}

/// The hints of a character file, one per line: where, the label, and the tooltip in one line.
fn character_hints(c: &mut Client, file: &str) -> String {
    let hints = c.request(
        "textDocument/inlayHint",
        json!({ "textDocument": { "uri": c.uri(file) },
                "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 999, "character": 0 } } }),
    );
    let mut out = String::new();
    for hint in hints.as_array().unwrap() {
        out.push_str(&format!(
            "{}:{} {} | {}\n",
            hint["position"]["line"],
            hint["position"]["character"],
            hint["label"].as_str().unwrap(),
            hint["tooltip"]["value"]
                .as_str()
                .unwrap()
                .replace("  \n", "; "),
        ));
    }
    out
}

#[test]
fn a_character_file_shows_each_saved_values_computed_result_and_follows_its_edits() {
    let testdata = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .canonicalize()
        .unwrap();
    let mut c = Client::start_in(testdata.clone());
    let file = "characters/fighter-5.yaml";
    let text = std::fs::read_to_string(testdata.join(file)).unwrap();
    c.open_text(file, &text);
    check(
        character_hints(&mut c, file),
        expect![[r#"
            20:36 → 18 | base `15`; add `2` from +2 to one ability score (`5e-srd-5.1:improvements.plus-two`), copy `fighter`; add `1` from Human (`5e-srd-5.1:species.human`), copy `human`
            21:36 → 14 | base `13`; add `1` from Human (`5e-srd-5.1:species.human`), copy `human`
            22:36 → 15 | base `14`; add `1` from Human (`5e-srd-5.1:species.human`), copy `human`
            23:35 → 9 | base `8`; add `1` from Human (`5e-srd-5.1:species.human`), copy `human`
            24:36 → 13 | base `12`; add `1` from Human (`5e-srd-5.1:species.human`), copy `human`
            25:36 → 11 | base `10`; add `1` from Human (`5e-srd-5.1:species.human`), copy `human`
            26:27 → 44 | base `44`
        "#]],
    );
    // Strength saved as 17 instead of 15: the score the sheet computes follows at once.
    let line = text
        .lines()
        .position(|l| l.contains("abilities.str.score: 15"))
        .unwrap() as u32;
    let column = text.lines().nth(line as usize).unwrap().len() as u32;
    c.change(file, [line, column - 2, line, column], "17");
    let after = character_hints(&mut c, file);
    check(
        after
            .lines()
            .find(|l| l.contains("base `17`"))
            .unwrap_or("none")
            .to_owned(),
        expect![
            "20:36 → 20 | base `17`; add `2` from +2 to one ability score (`5e-srd-5.1:improvements.plus-two`), copy `fighter`; add `1` from Human (`5e-srd-5.1:species.human`), copy `human`"
        ],
    );
    // A file that isn't a character (or a pack's) gets no hints, and no error.
    c.open_text("characters/notes.yaml", "just: [some, notes]\n");
    check(
        character_hints(&mut c, "characters/notes.yaml"),
        expect![[r#""#]],
    );
}
