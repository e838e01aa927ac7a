//! Every corpus formula (testdata/formulas/corpus.txt) evaluated against the sample context
//! (testdata/formulas/context.json) and type-checked against the environment that declares the same
//! names. The snapshot lists each formula's value or error code, and its type or check errors.

use std::fmt::Write;

use expect_test::expect_file;
use ocf_formula::{Env, ErrorCode, Formula, MapContext};

fn testdata(name: &str) -> String {
    let path = format!(
        "{}/../../testdata/formulas/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The formula of a corpus line: the text before the last ` # `.
fn formulas(corpus: &str) -> Vec<&str> {
    corpus
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.rsplit_once(" # ").map_or(l, |(f, _)| f))
        .collect()
}

#[test]
fn corpus_evaluates_and_checks() {
    let corpus = testdata("corpus.txt");
    let json: serde_json::Value = serde_json::from_str(&testdata("context.json")).unwrap();
    let ctx = MapContext::from_json(&json).unwrap();
    let env = Env::from_context(&ctx);
    let mut out = String::new();
    let mut ok = 0;
    let mut failed = Vec::new();
    for text in formulas(&corpus) {
        let formula = Formula::parse(text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        let value = match formula.evaluate(&ctx) {
            Ok(v) => {
                ok += 1;
                v.to_string()
            }
            Err(e) => {
                failed.push((text, e.code));
                format!("error {e}")
            }
        };
        let ty = match formula.check(&env) {
            Ok(ty) => ty.to_string(),
            Err(errors) => {
                let codes: Vec<String> = errors.iter().map(ToString::to_string).collect();
                format!("errors {}", codes.join("; "))
            }
        };
        writeln!(out, "{text}\n    = {value}\n    : {ty}").unwrap();
    }
    writeln!(out, "\n{ok} evaluated, {} failed", failed.len()).unwrap();
    expect_file!["corpus.snap"].assert_eq(&out);
    // The only failures are the two paths the chapters say are absent: an action path substituted
    // away (EA) and a link view of an empty slot (EC).
    assert_eq!(
        failed,
        [
            ("flags.ammo", ErrorCode::NoSuchKey),
            ("links.crew.upgrades.mastery", ErrorCode::NoSuchKey)
        ]
    );
}
