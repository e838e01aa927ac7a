//! The character writer's patch of a YAML file, over every sample character with random edits:
//! the patched text always reads back as the character the whole text of today's writer reads
//! as, and the file's leading comments stay.

use proptest::prelude::*;
use serde_yaml::Value;

fn samples() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/characters");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect()
}

fn read(text: &str) -> ocf_model::Character {
    ocf_load::character::read_character(
        text.as_bytes().to_vec(),
        "character",
        ocf_load::character::Format::Yaml,
        &ocf_load::build::ReadLimits::default(),
    )
    .unwrap()
    .character
}

/// Every node of `v` by its path of keys and indices.
fn paths(v: &Value, at: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(at.clone());
    match v {
        Value::Mapping(m) => {
            for (k, child) in m {
                at.push(k.clone());
                paths(child, at, out);
                at.pop();
            }
        }
        Value::Sequence(s) => {
            for (i, child) in s.iter().enumerate() {
                at.push(Value::from(i as u64));
                paths(child, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a mut Value, path: &[Value]) -> &'a mut Value {
    path.iter().fold(v, |v, key| match v {
        Value::Sequence(s) => &mut s[key.as_u64().unwrap() as usize],
        Value::Mapping(m) => m.get_mut(key).unwrap(),
        _ => unreachable!(),
    })
}

fn scalar(r: u64) -> Value {
    match r % 7 {
        0 => Value::from(r % 100),
        1 => Value::from(format!("x-{}", r % 10)),
        2 => Value::from(r.is_multiple_of(2)),
        3 => Value::from("a: b, [c] # d"),
        4 => Value::from("it's"),
        5 => Value::from("5"),
        _ => Value::from("two\nlines"),
    }
}

/// One edit of the character's value, chosen by `r`.
fn edit(v: &mut Value, r: u64) {
    let mut all = Vec::new();
    paths(v, &mut Vec::new(), &mut all);
    let path = &all[(r % all.len() as u64) as usize];
    let r = r / all.len() as u64;
    let node = at(v, path);
    match node {
        Value::Mapping(m) => match r % 3 {
            0 if !m.is_empty() => {
                let k = m.keys().nth((r / 3) as usize % m.len()).unwrap().clone();
                m.remove(&k);
            }
            1 => {
                m.insert(Value::from(format!("k{}", r % 5)), scalar(r / 5));
            }
            _ => {
                // A key the model knows, so more edits read.
                for key in ["equipped", "quantity", "creating"] {
                    if r.is_multiple_of(2) {
                        m.insert(Value::from(key), Value::from(r.is_multiple_of(3)));
                    }
                }
                m.insert(Value::from("5e-srd-5.1:hp.temp"), Value::from(r % 9));
            }
        },
        Value::Sequence(s) if !s.is_empty() => {
            let i = (r / 4) as usize % s.len();
            match r % 4 {
                0 => {
                    s.remove(i);
                }
                1 => {
                    let mut copy = s[i].clone();
                    if let Some(id) = copy.get_mut("id") {
                        *id = Value::from(format!("new-{}", r % 97));
                    }
                    s.insert((r / 7) as usize % (s.len() + 1), copy);
                }
                2 => {
                    let last = s.len() - 1;
                    s.swap(i, last);
                }
                _ => s.push(scalar(r)),
            }
        }
        _ => *node = scalar(r),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn patched_files_read_back_as_the_whole_writer_s(
        which in 0usize..1000,
        edits in proptest::collection::vec(any::<u64>(), 1..4),
    ) {
        let samples = samples();
        let (name, text) = &samples[which % samples.len()];
        let old = read(text);
        let mut value = serde_yaml::to_value(&old).unwrap();
        for r in &edits {
            edit(&mut value, *r);
        }
        // Only edits the model reads are characters to write.
        let Ok(new) = serde_yaml::from_value::<ocf_model::Character>(value) else {
            return Ok(());
        };
        let patched = ocf_cli::yaml_patch::patched(text, &new)
            .map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
        let whole = read(&serde_yaml::to_string(&new).unwrap());
        prop_assert_eq!(read(&patched), whole, "{}:\n{}", name, patched);
        let header: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
        let kept: Vec<&str> = patched.lines().take(header.len()).collect();
        prop_assert_eq!(header, kept, "{}", name);
    }
}
