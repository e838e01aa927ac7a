//! Issue 10 reviewed as an attacker's input would come: each refusal has its code (and a place),
//! whatever the input's size.

mod support;
use support::ocf;

/// Issue 10: "Every `ocf roll --distribution` answers or refuses with a code ... within about a
/// second, by a work bound counted in operations". Keeping a few of dice with very many faces was
/// refused only after the estimate of the work had itself taken seconds (quadratic in the faces).
/// Since issue 45 a keep-one pool is a power of the cumulative distribution, so the small ones
/// answer exactly; whatever is past the bound is still refused with its code.
#[test]
fn review_keep_of_dice_with_many_faces_is_answered_or_refused_with_a_code() {
    for notation in ["2d20000kh1", "1000d20000kh1", "100d20000kl1"] {
        let (text, status) = ocf(&["roll", "--distribution", notation]);
        match status {
            0 => assert!(text.lines().count() > 1000, "{notation}: {text}"),
            _ => {
                assert_eq!(status, 1, "{notation}: {text}");
                assert!(
                    text.starts_with("ocf: distribution-too-large"),
                    "{notation}: {text}"
                );
            }
        }
    }
    let (text, status) = ocf(&["roll", "--distribution", "2d20000kh1"]);
    assert_eq!(status, 0, "{text}");
}

/// A scratch folder of its own for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ocf-review-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
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

/// Issue 10: "accept the BOM, and give every read error a code" — a release file is JSON as a
/// character file may be: a byte-order mark is accepted, and bytes that are not UTF-8 are
/// `invalid-document` at their line and column, as in source and character files.
#[test]
fn review_a_release_file_with_a_bom_loads_and_one_not_utf8_is_placed() {
    let dir = scratch("release");
    let release = dir.join("release.json");
    let (text, status) = ocf(&[
        "build",
        "testdata/packs/fitd-scoundrel",
        "-o",
        release.to_str().unwrap(),
    ]);
    assert_eq!(status, 0, "{text}");
    let mut bytes = "\u{feff}".as_bytes().to_vec();
    bytes.extend(std::fs::read(&release).unwrap());
    std::fs::write(&release, &bytes).unwrap();
    let (text, status) = ocf(&["load", release.to_str().unwrap()]);
    assert_eq!(status, 0, "{text}");
    assert!(text.starts_with("packs: fitd-scoundrel 0.1.0"), "{text}");

    let bad = dir.join("bad.json");
    std::fs::write(&bad, b"{\n  \"id\": \"x\xff\"\n}\n").unwrap();
    let (text, status) = ocf(&["load", bad.to_str().unwrap()]);
    assert_eq!(status, 1, "{text}");
    let expected = format!(
        "{}:2:11: invalid-document: the file is not UTF-8",
        bad.display()
    );
    assert!(text.starts_with(&expected), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 10: "`ocf check` and `ocf load` agree: a problem `load` finds (an empty content
/// document, ...) is reported by `check` too, with file:line:col". An empty file has no node, so
/// its problem is where the file starts.
#[test]
fn review_an_empty_content_file_is_reported_with_a_line_and_column() {
    let dir = scratch("empty-content");
    let pack = dir.join("pack");
    copy_dir(
        std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/packs/fitd-scoundrel"
        )),
        &pack,
    );
    let file = pack.join("content/traumas/traumas.yaml");
    std::fs::write(&file, "# nothing yet\n").unwrap();
    let (text, status) = ocf(&["check", pack.to_str().unwrap()]);
    assert_eq!(status, 1, "{text}");
    let expected = format!(
        "{}:1:1: unknown-reference: the document is empty",
        file.display()
    );
    assert!(text.starts_with(&expected), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 10: every problem of a character file has "a code, a JSON pointer and line:col". A pack
/// pinned twice was loaded twice and refused by loadRuleset as `duplicate-pack` with no place in
/// the file; it is now said at the second pin.
#[test]
fn review_a_pack_pinned_twice_is_reported_at_the_second_pin() {
    let dir = scratch("pinned-twice");
    let file = dir.join("pc.yaml");
    std::fs::write(
        &file,
        "id: pc\nspecVersion: 1.0.0\npacks:\n  - { id: fitd-scoundrel, version: 0.1.0 }\n  - { id: fitd-scoundrel, version: 0.1.0 }\n",
    )
    .unwrap();
    let (text, status) = ocf(&["check", file.to_str().unwrap()]);
    assert_eq!(status, 1, "{text}");
    let expected = format!(
        "{}:5:5: duplicate-pack: pack `fitd-scoundrel` is pinned twice",
        file.display()
    );
    assert!(text.starts_with(&expected), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
