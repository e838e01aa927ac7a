//! `GET /api/characters/{id}/texts?lang=TAG` (issue 37): a character's packs' texts in a locale,
//! with the engine's own, and the display groups and field hints, so a page can word and lay out a
//! sheet without knowing a pack.

mod support;

use ocf_service::Limits;
use support::{post_fighter, request, start, temp_dir};

#[test]
fn a_page_gets_the_texts_and_hints_of_a_characters_packs() {
    let dir = temp_dir("texts");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    post_fighter(addr, "aldric");
    let (status, answer) = request(addr, "GET", "/api/characters/aldric/texts?lang=es", None);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["locale"], "es");
    // The engine's own texts answer in every locale (no pack gives them here).
    assert_eq!(answer["texts"]["compare.ge"], "{value} or more");
    assert_eq!(answer["texts"]["pauses.dice"], "Roll the dice");
    // The 5E pack's layout: its groups and its hints, fields qualified.
    let groups = answer["displayGroups"].as_object().unwrap();
    assert!(groups.contains_key("skills"), "{answer}");
    assert_eq!(
        answer["fieldHints"]["skills-athletics"]["field"],
        "5e-srd-5.1:skills.athletics.mod"
    );
    assert_eq!(answer["fieldHints"]["skills-athletics"]["show"], "modifier");

    let (status, refused) = request(addr, "GET", "/api/characters/aldric/texts?lang=en_US", None);
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["errors"][0]["code"], "invalid-locale");
    let (status, _) = request(addr, "GET", "/api/characters/nobody/texts", None);
    assert_eq!(status, 404);
    let _ = std::fs::remove_dir_all(&dir);
}
