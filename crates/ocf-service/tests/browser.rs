//! The web sheet editor in a real browser: Debian's headless Chromium driven through ChromeDriver's
//! WebDriver protocol (plain HTTP and JSON, so no client crate). It opens the fighter, raises
//! Strength and sees the modifiers that read it change — and only their rows rendered again — and
//! sees an edit refused in place. It logs in first, on the page's form, as the player who owns the
//! character. With `OCF_SCREENSHOTS=DIR` it saves what it saw there
//! (docs/screenshots holds a set).

mod support;

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ocf_service::Limits;
use ocf_service::accounts::{self, Role};
use ocf_service::store::SqliteStore;
use serde_json::{Value, json};
use support::*;

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

struct Driver {
    process: Child,
    addr: SocketAddr,
    session: String,
    /// One browser at a time: two Chromiums starting at once on a two-core machine slowed
    /// ChromeDriver's first answers past what it would wait for.
    _alone: std::sync::MutexGuard<'static, ()>,
}

static ONE_BROWSER: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Driver {
    /// ChromeDriver with a headless Chromium, or `None` when they are not installed (`.ci/run`
    /// installs them; `OCF_REQUIRE_BROWSER=1` makes their absence a failure).
    fn start() -> Option<Driver> {
        let found = |p: &str| std::path::Path::new(p).exists();
        if !found("/usr/bin/chromedriver") || !found("/usr/bin/chromium") {
            assert!(
                std::env::var_os("OCF_REQUIRE_BROWSER").is_none(),
                "chromium and chromium-driver are not installed"
            );
            eprintln!("skipped: chromium and chromium-driver are not installed");
            return None;
        }
        let alone = ONE_BROWSER
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let process = Command::new("/usr/bin/chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let started = Instant::now();
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "chromedriver did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let capabilities = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1200,1400"]
            }
        }}});
        // ChromeDriver listens before it is ready: its first connections can be reset (seen on CI's
        // first run of a fresh machine), so the session is asked for again a few times.
        let mut attempt = 0;
        let (status, answer) = loop {
            match try_request(addr, "POST", "/session", Some(&capabilities.to_string())) {
                Ok(answer) => break answer,
                Err(error) if attempt < 10 => {
                    eprintln!("asking ChromeDriver for a session again: {error}");
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(500));
                }
                Err(error) => panic!("a browser session: {error}"),
            }
        };
        assert_eq!(status, 200, "a browser session: {answer}");
        let session = answer["value"]["sessionId"].as_str().unwrap().to_owned();
        Some(Driver {
            process,
            addr,
            session,
            _alone: alone,
        })
    }

    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let path = format!("/session/{}{path}", self.session);
        let body = body.to_string();
        let (status, answer) = request(
            self.addr,
            method,
            &path,
            (method != "GET").then_some(body.as_str()),
        );
        assert_eq!(status, 200, "{method} {path}: {answer}");
        answer["value"].clone()
    }

    fn script(&self, script: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            json!({ "script": script, "args": [] }),
        )
    }

    /// Waits until `script` returns something truthy, and returns it.
    fn until(&self, what: &str, script: &str) -> Value {
        let started = Instant::now();
        loop {
            let value = self.script(script);
            if !(value.is_null() || value == json!(false) || value == json!("")) {
                return value;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "waited for {what}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn element(&self, css: &str) -> String {
        let found = self.call(
            "POST",
            "/element",
            json!({ "using": "css selector", "value": css }),
        );
        found[ELEMENT].as_str().unwrap().to_owned()
    }

    /// Selects what the box holds and types `text` over it, as a person would (WebDriver's own
    /// clear would commit an empty box first).
    fn type_into(&self, css: &str, text: &str) {
        let element = self.element(css);
        let text = format!("\u{E009}a\u{E000}{text}");
        self.call(
            "POST",
            &format!("/element/{element}/value"),
            json!({ "text": text }),
        );
    }

    fn screenshot(&self, name: &str) {
        let Some(dir) = std::env::var_os("OCF_SCREENSHOTS") else {
            return;
        };
        let png = self.call("GET", "/screenshot", json!({}));
        let bytes = decode_base64(png.as_str().unwrap());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(std::path::Path::new(&dir).join(name), bytes).unwrap();
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = try_request(
            self.addr,
            "DELETE",
            &format!("/session/{}", self.session),
            None,
        );
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let digits: Vec<u8> = text
        .bytes()
        .filter(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/')
        .map(value)
        .collect();
    digits
        .chunks(4)
        .flat_map(|chunk| {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, d)| n | (u32::from(*d) << (18 - 6 * i)));
            let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            bytes.into_iter().take(chunk.len().saturating_sub(1))
        })
        .collect()
}

/// A script giving the text of the value cell of `field`'s row, or null while the row is not there.
fn value_of(field: &str) -> String {
    format!(
        "return (() => {{ const row = document.getElementById('{}'); \
         return row ? row.querySelector('td.value').textContent : null; }})();",
        row_id(field)
    )
}

/// A script giving what the edit box of `field`'s row holds.
fn box_of(field: &str) -> String {
    format!(
        "return document.querySelector('#{} input').value;",
        row_id(field)
    )
}

/// The row's element ID, as sheet.js makes it.
fn row_id(field: &str) -> String {
    let safe: String = field
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("field-{safe}")
}

/// Clicks the longsword attack's button and gives the attack roll's bonus (its total less its die),
/// read off the action log the page shows.
fn attack_bonus(driver: &Driver) -> i64 {
    driver.script("document.getElementById('action-log').textContent = ''; return true;");
    let index = driver.until(
        "the attack button",
        "return [...document.querySelectorAll('#actions button')].findIndex(b => b.textContent === 'weapon-attack (longsword)') + 1 || null;",
    );
    let attack = driver.element(&format!("#actions .buttons button:nth-child({index})"));
    driver.call("POST", &format!("/element/{attack}/click"), json!({}));
    let log = driver.until(
        "the attack's log",
        "const t = document.getElementById('action-log').textContent; return t.includes('outcome') ? t : null;",
    );
    let log = log.as_str().unwrap().to_owned();
    // `attack faces [F] total T …`
    let face: i64 = log["attack faces [".len()..]
        .split(']')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let total: i64 = log
        .split(" total ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    total - face
}

#[test]
fn the_sheet_in_a_browser_updates_only_what_an_edit_changed() {
    let Some(driver) = Driver::start() else {
        return;
    };
    let dir = temp_dir("browser");
    // A table with accounts: the test's own calls carry the gamemaster's token, the browser logs
    // in on the page as Pat, who owns the character.
    let store = SqliteStore::open(dir.join("store.sqlite3").to_str().unwrap()).unwrap();
    accounts::put_user(&store, "gm", Role::Gamemaster, Some("correct horse")).unwrap();
    accounts::put_user(&store, "pat", Role::Player, Some("battery staple")).unwrap();
    let (token, _) = accounts::issue_token(&store, "gm", None).unwrap();
    let addr = start_on(Box::new(store), Limits::default());
    as_token(Some(&token));
    let text = std::fs::read_to_string(repo().join("testdata/characters/fighter-5.yaml")).unwrap();
    let body = json!({ "id": "aldric", "character": text, "owner": "pat" }).to_string();
    let (status, answer) = request(addr, "POST", "/api/characters", Some(&body));
    assert_eq!(status, 200, "{answer}");
    driver.call(
        "POST",
        "/url",
        json!({ "url": format!("http://{addr}/?character=aldric") }),
    );
    driver.until(
        "the login form",
        "return (getComputedStyle(document.getElementById('login')).display !== 'none' && getComputedStyle(document.querySelector('main')).display === 'none') || null;",
    );
    driver.screenshot("login.png");
    driver.type_into("#login-user", "pat");
    driver.type_into("#login-password", "wrong horse\u{E007}");
    let refused = driver.until(
        "the refused login",
        "return document.getElementById('login-error').textContent || null;",
    );
    assert!(
        refused.as_str().unwrap().contains("invalid-credentials"),
        "{refused}"
    );
    driver.type_into("#login-password", "battery staple\u{E007}");
    let who = driver.until(
        "the logged-in user",
        "return getComputedStyle(document.getElementById('login')).display === 'none' ? document.getElementById('who').textContent : null;",
    );
    assert_eq!(who, json!("pat (player)"));
    // The session cookie is HttpOnly: the page's scripts never see it.
    assert_eq!(driver.script("return document.cookie;"), json!(""));
    let read = |field: &str| driver.script(&value_of(field));
    let (str_score, str_mod, str_save) = (
        "5e-srd-5.1:abilities.str.score",
        "5e-srd-5.1:abilities.str.mod",
        "5e-srd-5.1:saves.str.mod",
    );
    driver.until("the sheet", &value_of(str_mod));
    assert_eq!(read(str_mod), json!("4"));
    assert_eq!(read(str_save), json!("7"));
    driver.screenshot("sheet.png");
    // Strength's +4, proficiency's +3 and the sword's own +1.
    let before = attack_bonus(&driver);
    assert_eq!(before, 8);
    // A row the edit does not change keeps its element: only changed rows are rendered again.
    let wis = row_id("5e-srd-5.1:abilities.wis.score");
    driver.script(&format!(
        "document.getElementById('{wis}').dataset.kept = 'yes'; return true;"
    ));

    // Strength 15 → 19 before bonuses: the score is 22, its modifier +6, the save +9.
    driver.type_into(&format!("#{} input", row_id(str_score)), "19\u{E007}");
    let raised = format!(
        "return ({}) === '6';",
        value_of(str_mod)
            .trim_start_matches("return ")
            .trim_end_matches(';')
    );
    driver.until("the new modifier", &raised);
    assert_eq!(read(str_save), json!("9"));
    assert_eq!(read(str_score), json!("22"));
    assert_eq!(driver.script(&box_of(str_score)), json!("19"));
    assert_eq!(
        driver.script(&format!(
            "return document.getElementById('{wis}').dataset.kept || null;"
        )),
        json!("yes")
    );
    driver.screenshot("strength-raised.png");

    // Hit points typed as words: refused in place, the stored value unchanged.
    driver.type_into(
        &format!("#{} input", row_id("5e-srd-5.1:hp.current")),
        "lots\u{E007}",
    );
    let status = driver.until(
        "the refusal",
        "const s = document.getElementById('status'); return s.className === 'error' ? s.textContent : null;",
    );
    assert!(status.as_str().unwrap().contains("wrong-type"), "{status}");
    let (_, sheet) = request(addr, "GET", "/api/characters/aldric/sheet", None);
    assert_eq!(
        sheet["sheet"]["values"]["5e-srd-5.1:hp.current"]["value"],
        44
    );
    assert_eq!(sheet["revision"], 2);
    driver.screenshot("edit-refused.png");

    // Seven fire damage from the damage box: an adjust through applyChanges, hit points 44 → 37.
    driver.type_into("#damage-amount", "7");
    let fire = driver.element("#damage-type option:nth-child(4)");
    driver.call("POST", &format!("/element/{fire}/click"), json!({}));
    let apply = driver.element("#damage button");
    driver.call("POST", &format!("/element/{apply}/click"), json!({}));
    let hp = format!(
        "return ({}) === '37';",
        value_of("5e-srd-5.1:hp.current")
            .trim_start_matches("return ")
            .trim_end_matches(';')
    );
    driver.until("hit points after the damage", &hp);
    let (_, sheet) = request(addr, "GET", "/api/characters/aldric/sheet", None);
    assert_eq!(sheet["revision"], 3);

    // The attack with the longsword after the Strength raise: the engine rolls, the log shows the
    // d20's face, and the bonus has grown with the modifier (+4 → +6).
    assert_eq!(attack_bonus(&driver), before + 2);
    driver.screenshot("damage-and-attack.png");

    // The fighting style from listOptions: each other style shows what it would change (Defense's
    // +1 AC lost), and picking one through applyChanges changes the sheet so.
    let list = driver.until(
        "the fighting style's options button",
        "return [...document.querySelectorAll('#choices button')].findIndex(b => b.dataset.choice === 'features.fighter.fighting-style/style') + 1 || null;",
    );
    let list = driver.element(&format!("#choices li:nth-child({list}) button"));
    driver.call("POST", &format!("/element/{list}/click"), json!({}));
    let would = driver.until(
        "another style's difference",
        "const b = document.querySelector('#option-list button'); return b ? b.closest('tr').querySelector('td.would').textContent : null;",
    );
    assert!(
        would.as_str().unwrap().contains("combat.ac 19 → 18"),
        "{would}"
    );
    let pick = driver.element("#option-list button");
    driver.call("POST", &format!("/element/{pick}/click"), json!({}));
    let ac = format!(
        "return ({}) === '18';",
        value_of("5e-srd-5.1:combat.ac")
            .trim_start_matches("return ")
            .trim_end_matches(';')
    );
    driver.until("the armor class after the pick", &ac);
    driver.screenshot("choice-picked.png");
}

#[test]
fn a_competing_option_is_picked_from_the_page() {
    let Some(driver) = Driver::start() else {
        return;
    };
    let dir = temp_dir("browser-competing");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    let text =
        std::fs::read_to_string(repo().join("testdata/characters/monk-3-mage-armor.yaml")).unwrap();
    let body = json!({ "id": "monk", "character": text }).to_string();
    assert_eq!(request(addr, "POST", "/api/characters", Some(&body)).0, 200);
    driver.call(
        "POST",
        "/url",
        json!({ "url": format!("http://{addr}/?character=monk") }),
    );
    // Mage Armor's 16 is recommended over Unarmored Defense's 15; the player picks the 15.
    let ac = "5e-srd-5.1:combat.ac";
    driver.until("the sheet", &value_of(ac));
    assert_eq!(driver.script(&value_of(ac)), json!("16"));
    let unarmored = driver.until(
        "the competing options",
        "return [...document.querySelectorAll('#competing button')].findIndex(b => b.dataset.option === '5e-srd-5.1:features.unarmored-defense#0') + 1 || null;",
    );
    let unarmored = driver.element(&format!("#competing li button:nth-of-type({unarmored})"));
    driver.call("POST", &format!("/element/{unarmored}/click"), json!({}));
    let picked = format!(
        "return ({}) === '15';",
        value_of(ac)
            .trim_start_matches("return ")
            .trim_end_matches(';')
    );
    driver.until("the armor class of the picked option", &picked);
    let (_, file) = request(addr, "GET", "/api/characters/monk", None);
    assert_eq!(
        file["character"]["competing"],
        json!(["5e-srd-5.1:features.unarmored-defense#0"])
    );
}
