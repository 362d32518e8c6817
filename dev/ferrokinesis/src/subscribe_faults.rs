//! The enhanced fan-out part of the Kinesis fault model, inside ferrokinesis's process: SubscribeToShard needs
//! HTTP/2, which the limits proxy (tests-integration/harness/limits_proxy.py) does not speak.
//!
//! - A second SubscribeToShard for the same consumer and shard within 5 seconds of a successful one is refused with
//!   `ResourceInUseException` (HTTP 400), as the SubscribeToShard API reference says AWS does ("If you call
//!   SubscribeToShard again with the same ConsumerARN and ShardId within 5 seconds of a successful call, you'll get
//!   a ResourceInUseException").
//! - A configured share of SubscribeToShard calls is answered with an error instead (`FERROKINESIS_SUBSCRIBE_FAULTS`,
//!   e.g. `LimitExceededException=0.05,InternalFailure=0.05`; `InternalFailure` with HTTP 500, others with 400).
//! - `GET /_faults` returns the counters as JSON: `subscribe_calls`, `refused_in_use`, `faulted`.
//!
//! How long a subscription lasts before the service ends it (5 minutes on AWS) is ferrokinesis's own
//! `subscribe_to_shard_session_ms`, set in main.rs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

const SUBSCRIBE_TARGET: &str = "Kinesis_20131202.SubscribeToShard";
const SPACING: Duration = Duration::from_secs(5);
const MAX_REQUEST_BYTES: usize = 1 << 20;

/// The model's settings and counters, shared by every connection.
#[derive(Default)]
pub struct SubscribeFaults {
    /// (error code, share of calls), drawn in order.
    faults: Vec<(String, f64)>,
    last_accepted: Mutex<HashMap<(String, String), Instant>>,
    calls: AtomicU64,
    refused_in_use: AtomicU64,
    faulted: AtomicU64,
}

impl SubscribeFaults {
    /// Reads `FERROKINESIS_SUBSCRIBE_FAULTS` (`code=share,...`); none when unset.
    pub fn from_env() -> Result<Self, String> {
        let spec = std::env::var("FERROKINESIS_SUBSCRIBE_FAULTS").unwrap_or_default();
        let mut faults = Vec::new();
        for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (code, share) = pair
                .split_once('=')
                .ok_or_else(|| format!("FERROKINESIS_SUBSCRIBE_FAULTS: '{pair}' is not code=share"))?;
            let share: f64 = share
                .parse()
                .map_err(|_| format!("FERROKINESIS_SUBSCRIBE_FAULTS: '{share}' is not a number from 0 to 1"))?;
            faults.push((code.to_string(), share));
        }
        Ok(SubscribeFaults { faults, ..Default::default() })
    }

    fn draw(&self) -> Option<&str> {
        let mut x: f64 = rand::random();
        for (code, share) in &self.faults {
            if x < *share {
                return Some(code);
            }
            x -= share;
        }
        None
    }

    fn stats(&self) -> Response {
        let body = serde_json::json!({
            "subscribe_calls": self.calls.load(Ordering::Relaxed),
            "refused_in_use": self.refused_in_use.load(Ordering::Relaxed),
            "faulted": self.faulted.load(Ordering::Relaxed),
        });
        ([(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
    }
}

/// An error answer the AWS SDK reads: the code in `x-amzn-ErrorType` and in the JSON body's `__type`.
fn kinesis_error(code: &str, message: &str) -> Response {
    let status = if code == "InternalFailure" { StatusCode::INTERNAL_SERVER_ERROR } else { StatusCode::BAD_REQUEST };
    let body = serde_json::json!({ "__type": code, "message": message }).to_string();
    let mut response = (status, [(header::CONTENT_TYPE, "application/x-amz-json-1.1")], body).into_response();
    response.headers_mut().insert("x-amzn-ErrorType", code.parse().expect("an error code is a header value"));
    response
}

/// The middleware: applies the model to SubscribeToShard calls and passes everything else through.
pub async fn apply(State(model): State<Arc<SubscribeFaults>>, request: Request, next: Next) -> Response {
    if request.uri().path() == "/_faults" {
        return model.stats();
    }
    let subscribe = request.headers().get("x-amz-target").is_some_and(|t| t == SUBSCRIBE_TARGET);
    if !subscribe {
        return next.run(request).await;
    }
    model.calls.fetch_add(1, Ordering::Relaxed);
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_REQUEST_BYTES).await else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    if let Some(code) = model.draw() {
        model.faulted.fetch_add(1, Ordering::Relaxed);
        return kinesis_error(code, &format!("{code} injected by the fault model"));
    }
    // A request the model cannot read (CBOR) is left to ferrokinesis without the 5-second rule.
    let key = serde_json::from_slice::<serde_json::Value>(&bytes).ok().and_then(|v| {
        Some((v.get("ConsumerARN")?.as_str()?.to_string(), v.get("ShardId")?.as_str()?.to_string()))
    });
    if let Some(key) = &key {
        let last = model.last_accepted.lock().expect("not poisoned");
        if last.get(key).is_some_and(|at| at.elapsed() < SPACING) {
            model.refused_in_use.fetch_add(1, Ordering::Relaxed);
            return kinesis_error(
                "ResourceInUseException",
                &format!("Another active subscription exists for consumer {} and shard {}", key.0, key.1),
            );
        }
    }
    let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
    if let (Some(key), true) = (key, response.status().is_success()) {
        model.last_accepted.lock().expect("not poisoned").insert(key, Instant::now());
    }
    response
}
