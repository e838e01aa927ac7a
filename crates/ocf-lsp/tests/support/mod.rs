//! The test client: the server in-process, over an in-memory connection, as an editor drives
//! it: initialize, didOpen, didChange, then the requests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use expect_test::Expect;
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{Value, json};

pub struct Client {
    pub conn: Connection,
    pub server: Option<JoinHandle<Result<(), String>>>,
    pub next: i32,
    pub root: PathBuf,
    /// Diagnostics published, in order: (file relative to the root, rendered).
    pub published: Vec<(String, Vec<String>)>,
    /// The version the next change sends (each change a newer one, as editors do).
    pub version: i32,
    /// Each publishDiagnostics' params as sent.
    pub raw: Vec<Value>,
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/packs")
}

impl Client {
    pub fn start() -> Client {
        Client::start_in(fixtures())
    }

    pub fn start_in(root: PathBuf) -> Client {
        let (server, client) = Connection::memory();
        let handle = std::thread::spawn(move || ocf_lsp::serve(&server));
        let mut c = Client {
            conn: client,
            server: Some(handle),
            next: 0,
            root: root.clone(),
            published: Vec::new(),
            version: 1,
            raw: Vec::new(),
        };
        let uri = url(&root);
        let init = c.request(
            "initialize",
            json!({ "capabilities": {}, "workspaceFolders": [{ "uri": uri, "name": "packs" }] }),
        );
        assert!(init["capabilities"]["hoverProvider"].as_bool() == Some(true));
        c.notify("initialized", json!({}));
        c
    }

    pub fn uri(&self, file: &str) -> String {
        url(&self.root.join(file))
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = RequestId::from(self.next);
        self.conn
            .sender
            .send(Message::Request(Request::new(
                id.clone(),
                method.to_owned(),
                params,
            )))
            .unwrap();
        loop {
            match self.conn.receiver.recv().expect("the server answers") {
                Message::Response(r) if r.id == id => {
                    return match r.error {
                        Some(e) => json!({ "error": { "code": e.code, "message": e.message } }),
                        None => r.result.unwrap_or(Value::Null),
                    };
                }
                Message::Notification(n) => self.collect(n),
                _ => {}
            }
        }
    }

    pub fn collect(&mut self, n: Notification) {
        if n.method != "textDocument/publishDiagnostics" {
            return;
        }
        self.raw.push(n.params.clone());
        let uri = n.params["uri"].as_str().unwrap_or_default();
        let path = url::Url::parse(uri).unwrap().to_file_path().unwrap();
        let file = path
            .strip_prefix(&self.root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let rendered = n.params["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                let r = &d["range"];
                format!(
                    "{}:{}-{}:{} {} {}: {}",
                    r["start"]["line"],
                    r["start"]["character"],
                    r["end"]["line"],
                    r["end"]["character"],
                    if d["severity"] == 1 {
                        "error"
                    } else {
                        "warning"
                    },
                    d["code"].as_str().unwrap_or_default(),
                    d["message"].as_str().unwrap_or_default()
                )
            })
            .collect();
        self.published.push((file, rendered));
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.conn
            .sender
            .send(Message::Notification(Notification::new(
                method.to_owned(),
                params,
            )))
            .unwrap();
        // A request answered after the notification: whatever it published has arrived.
        self.request("ocf/sync", json!(null));
    }

    pub fn open(&mut self, file: &str) {
        let text = std::fs::read_to_string(self.root.join(file)).unwrap();
        self.open_text(file, &text);
    }

    pub fn open_text(&mut self, file: &str, text: &str) {
        let uri = self.uri(file);
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "yaml", "version": 1, "text": text } }),
        );
    }

    pub fn change(&mut self, file: &str, range: [u32; 4], text: &str) {
        let uri = self.uri(file);
        self.version += 1;
        let version = self.version;
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{
                "range": { "start": { "line": range[0], "character": range[1] },
                           "end": { "line": range[2], "character": range[3] } },
                "text": text }] }),
        );
    }

    pub fn at(
        &mut self,
        method: &str,
        file: &str,
        line: u32,
        character: u32,
        extra: Value,
    ) -> Value {
        let mut params = json!({
            "textDocument": { "uri": self.uri(file) },
            "position": { "line": line, "character": character },
        });
        if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        self.request(method, params)
    }

    pub fn take_published(&mut self) -> String {
        self.published
            .drain(..)
            .map(|(file, diags)| {
                let mut s = format!("{file}:\n");
                for d in diags {
                    s.push_str(&format!("  {d}\n"));
                }
                s
            })
            .collect::<String>()
    }

    /// Locations as `file line:col-line:col`, relative to the root.
    pub fn locations(&self, value: &Value) -> String {
        let list = match value {
            Value::Array(list) => list.clone(),
            Value::Null => Vec::new(),
            other => vec![other.clone()],
        };
        list.iter()
            .map(|l| {
                let path = url::Url::parse(l["uri"].as_str().unwrap())
                    .unwrap()
                    .to_file_path()
                    .unwrap();
                let file = path.strip_prefix(&self.root).unwrap().display().to_string();
                let r = &l["range"];
                format!(
                    "{file} {}:{}-{}:{}\n",
                    r["start"]["line"],
                    r["start"]["character"],
                    r["end"]["line"],
                    r["end"]["character"]
                )
            })
            .collect()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.request("shutdown", json!(null));
        let _ = self
            .conn
            .sender
            .send(Message::Notification(Notification::new(
                "exit".to_owned(),
                json!(null),
            )));
        if let Some(handle) = self.server.take() {
            let _ = handle.join();
        }
    }
}

pub fn url(path: &Path) -> String {
    url::Url::from_file_path(path).unwrap().to_string()
}

pub fn check(actual: String, expect: Expect) {
    expect.assert_eq(&actual);
}
