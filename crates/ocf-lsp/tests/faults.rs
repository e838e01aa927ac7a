//! The faults found in the server's first round (issue 41), each as the editor met it: what the
//! server answers now.

mod support;

use std::io::{BufReader, Write};

use expect_test::expect;
use serde_json::{Value, json};
use support::{Client, check, fixtures, url};

/// A file of 5 000 duplicate tags: every problem is placed without scanning the file for it, and
/// the editor is sent the first 1 000 and a count of the rest.
#[test]
fn many_problems_are_placed_once_and_capped() {
    let mut c = Client::start();
    let mut text = String::from("id: sword\ntype: weapon\ntags:\n");
    for _ in 0..5000 {
        text.push_str("  - nope\n");
    }
    c.open_text("base/content/sword.yaml", &text);
    let published = c.raw.last().cloned().unwrap_or_default();
    let diagnostics = published["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(diagnostics.len(), 1001);
    check(
        format!(
            "{}\n{}\n",
            diagnostics[0]["message"], diagnostics[1000]["message"]
        ),
        expect![[r#"
            "the tag `nope` is not declared"
            "4000 more problems in this file are not shown (the first 1000 are); `ocf check` lists them all"
        "#]],
    );
}

/// A 1 MiB content file of items that each reference the next: it is indexed and checked (a
/// look-up per reference scanned the file before) and a hover at its end is answered.
#[test]
fn a_large_file_is_indexed_in_one_pass() {
    let mut c = Client::start();
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 1 << 20 {
        text.push_str(&format!(
            "- id: item{i}\n  type: weapon\n  extends: item{}\n  fields: {{ damage: 1d6 }}\n",
            i + 1
        ));
        i += 1;
    }
    text.push_str(&format!("- id: item{i}\n  type: weapon\n"));
    c.open_text("base/content/many.yaml", &text);
    let lines = text.lines().count() as u32;
    let hover = c.at(
        "textDocument/hover",
        "base/content/many.yaml",
        lines - 4,
        12,
        json!({}),
    );
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(shown.starts_with("content item `item"), "{shown}");
}

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// The next frame's body as JSON, diagnostics skipped.
fn next(reader: &mut impl std::io::BufRead) -> Value {
    loop {
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap() == 0 {
                return json!("end");
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = n.parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let value: Value = serde_json::from_slice(&body).unwrap();
        if value["method"] != "textDocument/publishDiagnostics" {
            return value;
        }
    }
}

/// Malformed frames and bodies are answered with a parse error and the server goes on; a lone
/// surrogate escape in a text is read as U+FFFD.
#[test]
fn a_malformed_message_is_answered_and_the_server_goes_on() {
    let (server_in, mut to_server) = std::io::pipe().unwrap();
    let (from_server, server_out) = std::io::pipe().unwrap();
    let server = std::thread::spawn(move || ocf_lsp::serve_streams(server_in, server_out));
    let mut from = BufReader::new(from_server);
    let root = url(&fixtures());
    let send = |to: &mut std::io::PipeWriter, bytes: &[u8]| to.write_all(bytes).unwrap();

    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "capabilities": {}, "workspaceFolders": [{ "uri": root, "name": "packs" }] } });
    send(&mut to_server, &frame(&init.to_string()));
    assert!(next(&mut from)["result"]["capabilities"]["renameProvider"].is_object());

    // A body that is not JSON, a header that is not one, a frame without a length, a value
    // that is no message.
    let mut answers = Vec::new();
    for bytes in [
        frame("{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": "),
        b"Content-Length: twelve\r\n\r\n".to_vec(),
        b"Content-Type: x\r\n\r\n".to_vec(),
        frame("[1, 2, 3]"),
    ] {
        send(&mut to_server, &bytes);
        let answer = next(&mut from);
        answers.push(format!(
            "{} {}",
            answer["error"]["code"], answer["error"]["message"]
        ));
    }
    check(
        answers.join("\n") + "\n",
        expect![[r#"
            -32700 "the body is not JSON: EOF while parsing a value at line 1 column 38"
            -32700 "a bad Content-Length: \"Content-Length: twelve\""
            -32700 "a frame without Content-Length"
            -32600 "not a request, response or notification: data did not match any variant of untagged enum Message"
        "#]],
    );

    // Half an emoji, as a JavaScript client sends it, in an opened file's text.
    let uri = url(&fixtures().join("homebrew/rules/attack.yaml"));
    let open = format!(
        r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"{uri}","languageId":"yaml","version":1,"text":"fields:\n  half:\n    type: string\n    description: \"\ud83d\"\n"}}}}}}"#
    );
    send(&mut to_server, &frame(&open));
    let symbols = json!({ "jsonrpc": "2.0", "id": 3, "method": "textDocument/documentSymbol",
        "params": { "textDocument": { "uri": uri } } });
    send(&mut to_server, &frame(&symbols.to_string()));
    let answer = next(&mut from);
    check(
        format!("{}\n", answer["result"][0]["name"]),
        expect![[r#"
            "half"
        "#]],
    );

    send(
        &mut to_server,
        &frame(r#"{"jsonrpc":"2.0","id":4,"method":"shutdown"}"#),
    );
    assert_eq!(next(&mut from)["id"], 4);
    send(
        &mut to_server,
        &frame(r#"{"jsonrpc":"2.0","method":"exit"}"#),
    );
    drop(to_server);
    assert_eq!(server.join().unwrap(), Ok(()));
}

/// Formulas written over several lines, folded, or with escapes: each name is found where it is
/// written.
#[test]
fn multi_line_formulas_are_read_where_they_are_written() {
    let mut c = Client::start();
    let text = "fields:\n  folded:\n    type: integer\n    formula: >-\n      str.score +\n      str.mod\n  plain:\n    type: integer\n    formula: str.score\n      + str.mod\n  quoted:\n    type: integer\n    formula: \"str.score \\\n      + max(str.mod, \\x30)\"\n  wrong:\n    type: integer\n    formula: >-\n      str.score +\n      str.mdo\n";
    c.open_text("homebrew/rules/multi.yaml", text);
    let mut out = String::new();
    for (line, character) in [(5, 8), (9, 10), (13, 9), (13, 14)] {
        let hover = c.at(
            "textDocument/hover",
            "homebrew/rules/multi.yaml",
            line,
            character,
            json!({}),
        );
        let first = hover["contents"]["value"]
            .as_str()
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned();
        let r = &hover["range"];
        out.push_str(&format!(
            "{line}:{character} {first} at {}:{}-{}:{}\n",
            r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"]
        ));
        let definition = c.at(
            "textDocument/definition",
            "homebrew/rules/multi.yaml",
            line,
            character,
            json!({}),
        );
        out.push_str(&c.locations(&definition));
    }
    out.push_str(&c.take_published());
    let completion = c.at(
        "textDocument/completion",
        "homebrew/rules/multi.yaml",
        5,
        10,
        json!({}),
    );
    let labels: Vec<String> = completion
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["label"].as_str().map(str::to_owned))
        .filter(|l| l.starts_with("str."))
        .collect();
    out.push_str(&format!("completion: {}\n", labels.join(", ")));
    check(
        out,
        expect![[r#"
            5:8 field `str.mod` at 5:6-5:13
            base/rules/abilities.yaml 3:2-3:9
            9:10 field `str.mod` at 9:8-9:15
            base/rules/abilities.yaml 3:2-3:9
            13:9 ``` at 13:8-13:11
            13:14 field `str.mod` at 13:12-13:19
            base/rules/abilities.yaml 3:2-3:9
            homebrew/rules/multi.yaml:
              18:6-18:13 error formula-error: unknown-name: no field `str.mdo`
            completion: str.score, str.mod
        "#]],
    );
}

fn labels(value: &Value) -> String {
    let mut out: Vec<String> = value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["label"].as_str().map(str::to_owned))
        .collect();
    out.sort();
    out.truncate(12);
    out.join(", ") + "\n"
}

/// Completion where the first round offered nothing.
#[test]
fn completion_after_a_space_in_flow_lists_and_in_every_list_item() {
    let mut c = Client::start();
    let mut out = String::new();
    let mut ask = |c: &mut Client, name: &str, file: &str, text: &str, line: u32, col: u32| {
        c.open_text(file, text);
        let got = c.at("textDocument/completion", file, line, col, json!({}));
        out.push_str(&format!("{name}: {}", labels(&got)));
    };
    ask(
        &mut c,
        "after `1 + `",
        "homebrew/rules/attack.yaml",
        "fields:\n  x:\n    type: integer\n    formula: 1 + \n",
        3,
        17,
    );
    ask(
        &mut c,
        "an empty formula",
        "homebrew/rules/attack.yaml",
        "fields:\n  x:\n    type: integer\n    formula: \n",
        3,
        13,
    );
    ask(
        &mut c,
        "a flow tag list",
        "homebrew/content/axe.yaml",
        "id: axe\ntype: weapon\ntags: [weapon, ab]\n",
        2,
        17,
    );
    ask(
        &mut c,
        "a flow map's value",
        "homebrew/rules/attack.yaml",
        "fields:\n  x: { type:  }\n",
        1,
        12,
    );
    ask(
        &mut c,
        "a block list's second item",
        "homebrew/content/axe.yaml",
        "id: axe\ntype: weapon\ntags:\n  - weapon\n  - ab\n",
        4,
        6,
    );
    ask(
        &mut c,
        "removeTags",
        "base/content/potions.yaml",
        "- id: potion.template\n  type: potion\n  template: true\n  removeTags:\n    - ab\n",
        4,
        8,
    );
    ask(
        &mut c,
        "an item of the same file",
        "base/content/potions.yaml",
        "- id: potion.healing\n  type: potion\n- id: potion.greater\n  type: potion\n  extends: potion.\n",
        4,
        18,
    );
    ask(
        &mut c,
        "self. in an item",
        "base/content/potions.yaml",
        "- id: potion.healing\n  type: potion\n  state:\n    charges: { type: integer }\n  effects:\n    - { target: str.score, op: add, value: self. }\n",
        5,
        48,
    );
    check(
        out,
        expect![[r#"
            after `1 + `: abs, all, any, ceil, character, count, countCopies, dieOf, fieldOf, filter, floor, has
            an empty formula: abs, action, all, amount, any, base, batch, ceil, change, character, choice, copy
            a flow tag list: ability
            a flow map's value: boolean, decimal, dice, enum, id, integer, set, string
            a block list's second item: ability
            removeTags: ability
            an item of the same file: potion.healing
            self. in an item: self.charges, self.equipped, self.id, self.quantity, self.templates
        "#]],
    );
}

/// A dependency with errors is still given to the packs depending on it, which are checked, with
/// a warning on the dependency.
#[test]
fn a_dependency_with_errors_does_not_hide_its_dependents_problems() {
    let mut c = Client::start();
    c.open("homebrew/pack.yaml");
    c.open("homebrew/rules/attack.yaml");
    c.take_published();
    c.open_text(
        "base/content/sword.yaml",
        "id: sword\ntype: weapon\ntags: [nope]\n",
    );
    check(
        c.take_published(),
        expect![[r#"
            base/content/sword.yaml:
              2:7-2:11 error unknown-tag: the tag `nope` is not declared
            homebrew/pack.yaml:
              4:2-4:6 warning dependency-has-errors: the dependency `base` has errors (see its own problems): this pack is checked against it as written
        "#]],
    );
}

/// `x` in a list function's condition is bound: each element.
#[test]
fn hover_on_a_list_functions_variable() {
    let mut c = Client::start();
    c.open_text(
        "homebrew/rules/attack.yaml",
        "fields:\n  x.count:\n    type: integer\n    formula: count([4, 6], x <= str.score)\n",
    );
    let hover = c.at(
        "textDocument/hover",
        "homebrew/rules/attack.yaml",
        3,
        28,
        json!({}),
    );
    let text = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        text.contains("bound in this formula: each element"),
        "{text}"
    );
}

/// Diagnostics carry the text's version; a change older than the text is not applied; a file
/// closed with problems is sent an empty list.
#[test]
fn diagnostics_are_never_stale() {
    let mut c = Client::start();
    c.open("homebrew/rules/attack.yaml");
    assert_eq!(c.raw.last().unwrap()["version"], 1);
    c.change("homebrew/rules/attack.yaml", [6, 25, 6, 25], ", 0");
    assert_eq!(c.raw.last().unwrap()["version"], 2);
    // Version 1 again: delivered late, not applied.
    let uri = c.uri("homebrew/rules/attack.yaml");
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 1 }, "contentChanges": [{ "text": "junk: [" }] }),
    );
    c.take_published();
    c.change("homebrew/rules/attack.yaml", [3, 13, 3, 20], "str.mdo");
    check(
        c.take_published(),
        expect![[r#"
            homebrew/rules/attack.yaml:
              3:13-3:20 error formula-error: unknown-name: no field `str.mdo`
        "#]],
    );
    c.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": uri } }),
    );
    check(
        c.take_published(),
        expect![[r#"
            homebrew/rules/attack.yaml:
        "#]],
    );
}
