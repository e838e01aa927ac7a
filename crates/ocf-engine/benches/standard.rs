//! The standard copies' rounds on the 5E sample: testdata/characters/fighter-5.yaml on the pack
//! testdata/packs/5e-srd-5.1, as shipped (no item declares `standardCopies` or `keepsTemplates`, so
//! there are no rounds) and with the fighter class given a standard dagger (so every open, and
//! every edit, runs activation rounds on a scratch database). Measures the rounds alone, opening
//! the character, a structural edit (equipping the shield) and a value edit, each without reading
//! the sheet, and the structural edit with the sheet read after it.
//!
//! `cargo bench -p ocf-engine --bench standard -- --warm-up-time 1 --measurement-time 3`

use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use ocf_engine::Session;
use ocf_model::{Character, PackRelease, Ruleset};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn release() -> PackRelease {
    ocf_load::source::read_pack(&root().join("testdata/packs/5e-srd-5.1")).expect("the 5E pack")
}

/// The 5E release with the fighter class holding a dagger as a standard copy.
fn with_rounds(release: &PackRelease) -> PackRelease {
    let mut json = serde_json::to_value(release).expect("a release as JSON");
    let fighter = json["content"]
        .as_array_mut()
        .expect("content")
        .iter_mut()
        .find(|item| item["id"] == "classes.fighter")
        .expect("the fighter class");
    fighter["standardCopies"] = serde_json::json!([
        { "type": "weapon", "where": "item.id == '5e-srd-5.1:weapons.dagger'" }
    ]);
    serde_json::from_value(json).expect("the release with rounds")
}

fn load(release: PackRelease) -> Ruleset {
    ocf_load::load_ruleset(&[release], &Default::default()).expect("the 5E ruleset")
}

fn fighter() -> Character {
    let text = std::fs::read_to_string(root().join("testdata/characters/fighter-5.yaml"))
        .expect("the fighter");
    let yaml: serde_json::Value = serde_yaml::from_str(&text).expect("the fighter's YAML");
    serde_json::from_value(yaml).expect("the fighter as a character")
}

fn bench(c: &mut Criterion) {
    let release = release();
    let character = fighter();
    for (name, ruleset) in [
        ("5e", load(release.clone())),
        ("5e with rounds", load(with_rounds(&release))),
    ] {
        let ruleset = Arc::new(ruleset);
        let mut group = c.benchmark_group(format!("standard copies, {name}"));
        group.bench_function("rounds", |b| {
            b.iter(|| ocf_engine::load::with_standard_copies(&ruleset, &character))
        });
        group.bench_function("open", |b| {
            let mut session = Session::new((*ruleset).clone());
            b.iter(|| {
                let pc = session.open(&character, &[]);
                session.close(pc);
            })
        });
        let mut session = Session::new((*ruleset).clone());
        let pc = session.open(&character, &[]);
        session.sheet(pc).unwrap();
        let mut on = false;
        group.bench_function("equip", |b| {
            b.iter(|| {
                on = !on;
                session.equip(pc, "shield", on).unwrap();
            })
        });
        group.bench_function("equip, then sheet", |b| {
            b.iter(|| {
                on = !on;
                session.equip(pc, "shield", on).unwrap();
                session.sheet(pc).unwrap()
            })
        });
        let mut hp = 0;
        group.bench_function("value", |b| {
            b.iter(|| {
                hp = (hp + 1) % 40;
                let value = serde_json::json!(hp);
                session
                    .set_value(pc, "5e-srd-5.1:hp.current", Some(value))
                    .unwrap();
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
