//! The server in-process, over an in-memory connection, as an editor drives it: initialize,
//! didOpen, didChange, then the requests; what it answers is rendered and snapshotted.

mod support;

use std::path::Path;

use expect_test::expect;
use serde_json::{Value, json};
use support::{Client, check, fixtures};

#[test]
fn diagnostics_as_you_type() {
    let mut c = Client::start();
    c.open("homebrew/rules/attack.yaml");
    check(
        c.take_published(),
        expect![[r#"
            homebrew/rules/attack.yaml:
              6:14-6:26 error formula-error: type-mismatch: max() takes at least 2 arguments, found 1
        "#]],
    );
    // Fix it: `max(str.mod)` becomes `max(str.mod, 0)`.
    c.change("homebrew/rules/attack.yaml", [6, 25, 6, 25], ", 0");
    check(
        c.take_published(),
        expect![[r#"
            homebrew/rules/attack.yaml:
        "#]],
    );
    // An unknown field, inside the formula; a half-typed line.
    c.change("homebrew/rules/attack.yaml", [3, 13, 3, 20], "str.mdo");
    check(
        c.take_published(),
        expect![[r#"
            homebrew/rules/attack.yaml:
              3:13-3:20 error formula-error: unknown-name: no field `str.mdo`
        "#]],
    );
    c.change(
        "homebrew/rules/attack.yaml",
        [7, 0, 7, 0],
        "  attack.half: { type: \n",
    );
    check(
        c.take_published(),
        expect![[r#"
            homebrew/rules/attack.yaml:
              8:0-8:0 error invalid-yaml: while parsing a node, did not find expected node content
        "#]],
    );
    // A warning is a warning: a declared dependency the workspace does not hold.
    c.open_text(
        "homebrew/pack.yaml",
        "id: homebrew\nversion: 1.0.0\nspecVersion: 1.0.0\ndependencies:\n  base: ^1.0.0\n  elsewhere: ^2.0.0\n",
    );
    check(
        c.take_published(),
        expect![[r#"
        homebrew/pack.yaml:
          5:2-5:11 warning unchecked-dependency: the dependency `elsewhere` was not given: references and tags it may declare are not checked
    "#]],
    );
}

fn hover_text(value: &Value) -> String {
    match value["contents"]["value"].as_str() {
        Some(text) => format!("{text}\n"),
        None => format!("{value}\n"),
    }
}

#[test]
fn hover_names_functions_and_roots() {
    let mut c = Client::start();
    c.open("homebrew/rules/attack.yaml");
    // `str.mod` in `formula: str.mod + 2` (line 3), declared in the dependency.
    let field = c.at(
        "textDocument/hover",
        "homebrew/rules/attack.yaml",
        3,
        15,
        json!({}),
    );
    check(
        hover_text(&field),
        expect![[r#"
        field `str.mod`

        declared in `base`, rules/abilities.yaml:4
        ```yaml
        type: integer
        formula: floor((str.score - 10) / 2)
        tags: [ability]
        ```
    "#]],
    );
    // `max` in `'max(str.mod)'`.
    let function = c.at(
        "textDocument/hover",
        "homebrew/rules/attack.yaml",
        6,
        15,
        json!({}),
    );
    check(
        hover_text(&function),
        expect![[r#"
        ```
        max(a, b, ...) -> number
        ```
        function: the greatest of two or more numbers: an int if all are ints, else a decimal
    "#]],
    );
    c.open_text("base/content/sword.yaml", "id: sword\ntype: weapon\ntags: [weapon]\nfields: { damage: 1d8 }\neffects:\n  - { target: str.score, op: add, value: maxOf(item.damage) }\n");
    let root = c.at(
        "textDocument/hover",
        "base/content/sword.yaml",
        5,
        50,
        json!({}),
    );
    check(
        hover_text(&root),
        expect![[r#"
            ```
            item
            ```
            context root: the item, merged with the copy's templates; rebound to the candidate in queries

            bound in this formula

            members: `id`, `type`, `tags`
        "#]],
    );
    let tag = c.at(
        "textDocument/hover",
        "base/content/sword.yaml",
        2,
        8,
        json!({}),
    );
    check(
        hover_text(&tag),
        expect![[r#"
        tag `weapon`

        declared in `base`, rules/abilities.yaml:1
    "#]],
    );
    let content = c.at(
        "textDocument/hover",
        "homebrew/content/axe.yaml",
        2,
        15,
        json!({}),
    );
    check(
        hover_text(&content),
        expect![[r#"
        content item `base:sword`

        declared in `base`, content/sword.yaml:1
        ```yaml
        id: sword
        type: weapon
        tags: [weapon]
        fields: {…}
        effects: [{…}]
        ```
    "#]],
    );
    // A YAML key says what it means, from the schemas.
    let key = c.at(
        "textDocument/hover",
        "homebrew/content/axe.yaml",
        0,
        0,
        json!({}),
    );
    check(
        hover_text(&key),
        expect![[r#"
        ```yaml
        id:
        ```
        Required, except on an `override` (which names the item it changes).
    "#]],
    );
    // A value that names nothing says nothing.
    let nothing = c.at(
        "textDocument/hover",
        "homebrew/content/axe.yaml",
        3,
        20,
        json!({}),
    );
    check(
        hover_text(&nothing),
        expect![[r#"
        null
    "#]],
    );
}

#[test]
fn definition_and_references_across_packs() {
    let mut c = Client::start();
    c.open("homebrew/rules/attack.yaml");
    let def = c.at(
        "textDocument/definition",
        "homebrew/rules/attack.yaml",
        3,
        15,
        json!({}),
    );
    check(
        c.locations(&def),
        expect![[r#"
        base/rules/abilities.yaml 3:2-3:9
    "#]],
    );
    let ty = c.at(
        "textDocument/definition",
        "homebrew/content/axe.yaml",
        1,
        8,
        json!({}),
    );
    check(
        c.locations(&ty),
        expect![[r#"
        base/rules/abilities.yaml 8:2-8:8
    "#]],
    );
    let parent = c.at(
        "textDocument/definition",
        "homebrew/content/axe.yaml",
        2,
        12,
        json!({}),
    );
    check(
        c.locations(&parent),
        expect![[r#"
        base/content/sword.yaml 0:4-0:9
    "#]],
    );
    let refs = c.at(
        "textDocument/references",
        "base/rules/abilities.yaml",
        3,
        4,
        json!({ "context": { "includeDeclaration": true } }),
    );
    check(
        c.locations(&refs),
        expect![[r#"
        base/rules/abilities.yaml 3:2-3:9
        homebrew/rules/attack.yaml 3:13-3:20
        homebrew/rules/attack.yaml 6:18-6:25
    "#]],
    );
    let tag_refs = c.at(
        "textDocument/references",
        "base/rules/abilities.yaml",
        0,
        8,
        json!({ "context": { "includeDeclaration": false } }),
    );
    check(
        c.locations(&tag_refs),
        expect![[r#"
        base/rules/abilities.yaml 2:80-2:87
        base/rules/abilities.yaml 6:11-6:18
    "#]],
    );
}

fn labels(value: &Value) -> String {
    let items = value.as_array().cloned().unwrap_or_default();
    let mut out: Vec<String> = items
        .iter()
        .map(|i| {
            format!(
                "{} ({})",
                i["label"].as_str().unwrap_or_default(),
                i["detail"].as_str().unwrap_or("")
            )
        })
        .collect();
    out.truncate(40);
    out.join("\n") + "\n"
}

#[test]
fn completion_in_formulas_references_and_keys() {
    let mut c = Client::start();
    c.open_text(
        "homebrew/rules/attack.yaml",
        "fields:\n  attack.bonus:\n    type: integer\n    formula: str.m + fl\n    \n",
    );
    let fields = c.at(
        "textDocument/completion",
        "homebrew/rules/attack.yaml",
        3,
        18,
        json!({}),
    );
    check(
        labels(&fields),
        expect![[r#"
        str.mod (field: integer)
    "#]],
    );
    let functions = c.at(
        "textDocument/completion",
        "homebrew/rules/attack.yaml",
        3,
        23,
        json!({}),
    );
    check(
        labels(&functions),
        expect![[r#"
            floor (floor(n: number) -> int)
        "#]],
    );
    let keys = c.at(
        "textDocument/completion",
        "homebrew/rules/attack.yaml",
        4,
        4,
        json!({}),
    );
    check(
        labels(&keys),
        expect![[r#"
            of ()
            values ()
            input ()
            default ()
            min ()
            max ()
            limits ()
            rounding ()
            recommend ()
            tags ()
            members ()
            nameFrom ()
            absorbs ()
            overflow ()
        "#]],
    );
    c.open_text(
        "homebrew/rules/attack.yaml",
        "fields:\n  attack.bonus:\n    type: \n",
    );
    let values = c.at(
        "textDocument/completion",
        "homebrew/rules/attack.yaml",
        2,
        10,
        json!({}),
    );
    check(
        labels(&values),
        expect![[r#"
        integer ()
        decimal ()
        boolean ()
        string ()
        enum ()
        id ()
        set ()
        dice ()
    "#]],
    );
    c.open_text("homebrew/content/axe.yaml", "id: axe\ntype: \nextends: \n");
    let types = c.at(
        "textDocument/completion",
        "homebrew/content/axe.yaml",
        1,
        6,
        json!({}),
    );
    check(
        labels(&types),
        expect![[r#"
            weapon (content type)
            potion (content type)
        "#]],
    );
    let items = c.at(
        "textDocument/completion",
        "homebrew/content/axe.yaml",
        2,
        9,
        json!({}),
    );
    check(
        labels(&items),
        expect![[r#"
            potion.healing (content item (potion))
            potion.template (content item (potion))
            sword (content item (weapon))
        "#]],
    );
    c.open_text(
        "homebrew/content/axe.yaml",
        "- id: axe\n  type: weapon\n  extends: \n  templates:\n    - \n",
    );
    let same_type = c.at(
        "textDocument/completion",
        "homebrew/content/axe.yaml",
        2,
        11,
        json!({}),
    );
    check(
        labels(&same_type),
        expect![[r#"
        sword (content item (weapon))
    "#]],
    );
    let templates = c.at(
        "textDocument/completion",
        "homebrew/content/axe.yaml",
        4,
        6,
        json!({}),
    );
    check(
        labels(&templates),
        expect![[r#"
        potion.template (content item (potion))
    "#]],
    );
}

#[test]
fn a_type_error_that_depends_on_a_fields_type_is_placed_at_its_part_of_the_formula() {
    let mut c = Client::start();
    // `str.score` is an integer (base's abilities): `str.score && …` is the error, not the rest.
    c.open_text(
        "homebrew/rules/typed.yaml",
        "fields:\n  brave:\n    type: boolean\n    formula: 1 > 0 || (str.score && true)\n",
    );
    check(
        c.take_published(),
        expect![[r#"
            homebrew/rules/typed.yaml:
              3:23-3:32 error formula-error: type-mismatch: `&&` needs bool, found int
        "#]],
    );
}

#[test]
fn completion_of_item_field_values_follows_their_declarations_of() {
    let mut c = Client::start();
    c.open_text(
        "homebrew/rules/kits.yaml",
        "contentTypes:\n  kit:\n    fields:\n      holds: { type: id, of: potion }\n      uses: { type: set, of: weapon }\n      stat: { type: id, of: field }\n",
    );
    c.open_text(
        "homebrew/content/kit.yaml",
        "id: medkit\ntype: kit\nfields:\n  holds: \n  stat: str\n  uses:\n    - \n",
    );
    let at = |c: &mut Client, line, character| {
        let found = c.at(
            "textDocument/completion",
            "homebrew/content/kit.yaml",
            line,
            character,
            json!({}),
        );
        labels(&found)
    };
    // `of: potion`: the potions, not the sword.
    check(
        at(&mut c, 3, 9),
        expect![[r#"
            potion.healing (content item (potion))
            potion.template (content item (potion))
        "#]],
    );
    // `of: field`: field IDs.
    check(
        at(&mut c, 4, 11),
        expect![[r#"
            str.score (field)
            str.mod (field)
        "#]],
    );
    // A `set` field's elements: `of: weapon`.
    check(
        at(&mut c, 6, 6),
        expect![[r#"
            axe (content item (weapon))
            sword (content item (weapon))
        "#]],
    );
}

#[test]
fn symbols_and_formatting() {
    let mut c = Client::start();
    c.open("base/rules/abilities.yaml");
    let symbols = c.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": c.uri("base/rules/abilities.yaml") } }),
    );
    let rendered: String = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{} {} {}\n",
                s["detail"].as_str().unwrap(),
                s["name"].as_str().unwrap(),
                s["selectionRange"]["start"]["line"]
            )
        })
        .collect();
    check(
        rendered,
        expect![[r#"
        tag ability 0
        tag weapon 0
        field str.score 2
        field str.mod 3
        content type weapon 8
    "#]],
    );
    c.open_text(
        "homebrew/rules/attack.yaml",
        "fields:\n  a.b: { type: integer, formula: 'max( str.mod,1 )' }\n  a.c: { type: integer, formula: str.mod+1 }\n",
    );
    let edits = c.request(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": c.uri("homebrew/rules/attack.yaml") }, "options": { "tabSize": 2, "insertSpaces": true } }),
    );
    check(
        format!("{edits}\n"),
        expect![[r#"
        [{"range":{"start":{"line":2,"character":33},"end":{"line":2,"character":42}},"newText":"str.mod + 1"}]
    "#]],
    );
}

#[test]
fn a_failing_request_is_answered_and_the_server_goes_on() {
    let mut c = Client::start();
    let bad = c.request("textDocument/hover", json!({ "textDocument": 3 }));
    check(
        format!("{bad}\n"),
        expect![[r#"
        {"error":{"code":-32602,"message":"invalid type: integer `3`, expected struct TextDocumentIdentifier"}}
    "#]],
    );
    let unknown = c.request("textDocument/unknownThing", json!({}));
    check(
        format!("{unknown}\n"),
        expect![[r#"
        {"error":{"code":-32601,"message":"the server does not answer `textDocument/unknownThing`"}}
    "#]],
    );
    // Any text at all: binary junk, deep nesting, a tab-indented half map.
    for text in [
        "\u{0}\u{1}: [",
        &"[".repeat(5000),
        "fields:\n\tx: {",
        "- - - : : :",
        "fields: { a: { formula: '(((' } }",
    ] {
        c.open_text("homebrew/rules/attack.yaml", text);
        for (line, col) in [(0, 0), (0, 3), (1, 2), (5, 5)] {
            c.at(
                "textDocument/hover",
                "homebrew/rules/attack.yaml",
                line,
                col,
                json!({}),
            );
            c.at(
                "textDocument/completion",
                "homebrew/rules/attack.yaml",
                line,
                col,
                json!({}),
            );
            c.at(
                "textDocument/definition",
                "homebrew/rules/attack.yaml",
                line,
                col,
                json!({}),
            );
        }
    }
    c.open("homebrew/rules/attack.yaml");
    let hover = c.at(
        "textDocument/hover",
        "homebrew/rules/attack.yaml",
        3,
        15,
        json!({}),
    );
    assert!(hover_text(&hover).contains("str.mod"));
}

#[test]
fn the_5e_pack_situational_choices_and_actions() {
    let packs = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/packs")
        .canonicalize()
        .unwrap();
    let mut c = Client::start_in(packs.clone());
    c.open("5e-srd-5.1/rules/actions.yaml");
    check(
        c.take_published(),
        expect![[r#"
        5e-srd-5.1/rules/actions.yaml:
    "#]],
    );
    // Where the weapon attack's damage reads `situational.twoHanded`, found in the file's text so
    // that edits of the pack above it don't move the cursor off it.
    let text = std::fs::read_to_string(packs.join("5e-srd-5.1/rules/actions.yaml")).unwrap();
    let (line, column) = text
        .lines()
        .enumerate()
        .find_map(|(i, l)| {
            l.find("situational.twoHanded")
                .map(|c| (i as u32, c as u32 + 14))
        })
        .unwrap();
    let situational = c.at(
        "textDocument/definition",
        "5e-srd-5.1/rules/actions.yaml",
        line,
        column,
        json!({}),
    );
    check(
        c.locations(&situational),
        expect![[r#"
        5e-srd-5.1/rules/actions.yaml 13:2-13:11
    "#]],
    );
    let uses = c.at(
        "textDocument/references",
        "5e-srd-5.1/rules/actions.yaml",
        36,
        10,
        json!({ "context": { "includeDeclaration": false } }),
    );
    check(
        c.locations(&uses),
        expect![[r#"
            5e-srd-5.1/rules/content-types.yaml 79:13-79:26
            5e-srd-5.1/rules/display.yaml 34:25-34:38
            5e-srd-5.1/rules/display.yaml 37:28-37:41
        "#]],
    );
    let hover = c.at(
        "textDocument/hover",
        "5e-srd-5.1/rules/actions.yaml",
        line,
        column,
        json!({}),
    );
    check(
        hover_text(&hover),
        expect![[r#"
            situational choice `twoHanded`

            name: **Two-handed grip (en)**

            declared in `5e-srd-5.1`, rules/actions.yaml:14
            ```yaml
            type: boolean
            default: false
            ```
        "#]],
    );
}

#[test]
fn every_prefix_of_a_file_is_answered() {
    let mut c = Client::start();
    for file in [
        "homebrew/rules/attack.yaml",
        "base/rules/abilities.yaml",
        "base/content/sword.yaml",
        "homebrew/pack.yaml",
    ] {
        let text = std::fs::read_to_string(c.root.join(file)).unwrap();
        for cut in (0..text.len()).step_by(7) {
            let prefix = &text[..cut];
            c.open_text(file, prefix);
            let line = prefix.matches('\n').count() as u32;
            let col = prefix.rsplit('\n').next().unwrap_or("").len() as u32;
            for method in [
                "textDocument/completion",
                "textDocument/hover",
                "textDocument/definition",
            ] {
                let answer = c.at(method, file, line, col, json!({}));
                assert!(
                    answer.get("error").is_none(),
                    "{method} on {file}[..{cut}]: {answer}"
                );
            }
        }
        c.open(file);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn files_changed_on_disk_are_read_again() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lsp-watched-files");
    let _ = std::fs::remove_dir_all(&root);
    copy_dir(&fixtures(), &root);
    let mut c = Client::start_in(root.clone());
    c.open("homebrew/rules/attack.yaml");
    c.take_published();

    // The dependency's file declaring `str.mod` (and the `weapon` type its sword is) is deleted by
    // another program: the dependency has errors, and the pack is still checked against it as it
    // is (with `dependency-has-errors` in homebrew's pack.yaml, which is not open): the reads of
    // `str.mod` are unknown.
    let abilities = root.join("base/rules/abilities.yaml");
    let text = std::fs::read_to_string(&abilities).unwrap();
    std::fs::remove_file(&abilities).unwrap();
    let uri = c.uri("base/rules/abilities.yaml");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({ "changes": [{ "uri": uri, "type": 3 }] }),
    );
    check(
        c.take_published(),
        expect![[r#"
        homebrew/rules/attack.yaml:
          3:13-3:20 error formula-error: unknown-name: no field `str.mod`
          6:18-6:25 error formula-error: unknown-name: no field `str.mod`
    "#]],
    );

    // It comes back (created), then a field is renamed in it (changed).
    std::fs::write(&abilities, &text).unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({ "changes": [{ "uri": uri, "type": 1 }] }),
    );
    check(
        c.take_published(),
        expect![[r#"
        homebrew/rules/attack.yaml:
          6:14-6:26 error formula-error: type-mismatch: max() takes at least 2 arguments, found 1
    "#]],
    );
    std::fs::write(&abilities, text.replace("str.mod", "str.modifier")).unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({ "changes": [{ "uri": uri, "type": 2 }] }),
    );
    check(
        c.take_published(),
        expect![[r#"
        homebrew/rules/attack.yaml:
          3:13-3:20 error formula-error: unknown-name: no field `str.mod`
          6:18-6:25 error formula-error: unknown-name: no field `str.mod`
    "#]],
    );

    // An open file keeps the editor's text whatever happens on disk.
    std::fs::write(root.join("homebrew/rules/attack.yaml"), "fields: {}\n").unwrap();
    let uri = c.uri("homebrew/rules/attack.yaml");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({ "changes": [{ "uri": uri, "type": 2 }] }),
    );
    check(c.take_published(), expect![[r#""#]]);
}
