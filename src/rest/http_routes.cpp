#include "rest/http_routes.hpp"

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "rest/keep_alive_server.hpp"
#include "rest/web_assets.hpp"

namespace c2c::rest {
namespace {

// The GUI loads only its own modules and styles and talks only to this origin.
constexpr const char* kCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

httplib::Server* g_server = nullptr;
void on_signal(int) {
  if (g_server) g_server->stop();
}

// When this worker thread began routing its current request (set by the pre-routing handler), so
// every API reply says how long the gateway spent on it (daemon calls included) in Server-Timing:
// a client (bench/rest_gateway_bench.py) tells the HTTP layer's cost from the handler's.
thread_local std::chrono::steady_clock::time_point t_routed;

void send(httplib::Response& res, const Reply& r) {
  res.status = r.status;
  res.set_header("Cache-Control", "no-store");
  std::chrono::duration<double, std::milli> spent = std::chrono::steady_clock::now() - t_routed;
  char timing[48];
  std::snprintf(timing, sizeof(timing), "app;dur=%.3f", spent.count());
  res.set_header("Server-Timing", timing);
  // A string the daemon sent may hold bytes that are not UTF-8 (a thread's name); replace them
  // rather than throw (an exception here was a 500).
  res.set_content(r.body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

const std::string* header(const httplib::Request& req, const char* name, std::string& holder) {
  if (!req.has_header(name)) return nullptr;
  holder = req.get_header_value(name);
  return &holder;
}

std::multimap<std::string, std::string> query_of(const httplib::Request& req) {
  return {req.params.begin(), req.params.end()};
}

// One open /api/v1/events: a thread reads the daemon's Watch stream into a queue; the HTTP
// worker drains it into the response and sends a comment every 15 s so a dead client is noticed
// (the write fails) even when nothing changes.
struct EventStream {
  std::optional<client::ChangeStream> stream;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> queue;
  bool ended = false;
  std::string end_reason;
  std::thread reader;

  void start(const client::NodeClient& node) {
    stream.emplace(node.watch());
    reader = std::thread([this] {
      reply::Change ev;
      while (stream->next(ev)) {
        std::lock_guard<std::mutex> l(mu);
        queue.push_back("event: change\nid: " + std::to_string(ev.node_generation) + "\ndata: " + ev.json.dump() + "\n\n");
        cv.notify_one();
      }
      auto err = stream->finish();
      std::lock_guard<std::mutex> l(mu);
      ended = true;
      end_reason = err ? err->message : "the daemon closed the stream";
      cv.notify_one();
    });
  }
  ~EventStream() {
    if (stream) stream->cancel();
    if (reader.joinable()) reader.join();
  }
};

void serve_asset(const httplib::Request& req, httplib::Response& res, const WebAsset& a) {
  res.set_header("ETag", std::string(a.etag));
  // Revalidate every time (cheap: 304 by ETag), so an upgraded gateway never serves a stale GUI.
  res.set_header("Cache-Control", "no-cache");
  if (req.has_header("If-None-Match") && req.get_header_value("If-None-Match") == a.etag) {
    res.status = 304;
    return;
  }
  res.set_content(std::string(a.content), std::string(a.content_type).c_str());
}

}  // namespace

std::optional<std::string> options_problem(const ServerOptions& o) {
  const auto& l = o.limits;
  if (o.worker_threads <= l.max_connections)
    return "--worker-threads (" + std::to_string(o.worker_threads) + ") must be more than --max-connections (" +
           std::to_string(l.max_connections) + "): a spare worker refuses a connection over the limit at once";
  if (l.max_connections_per_client > l.max_connections)
    return "--max-connections-per-client (" + std::to_string(l.max_connections_per_client) +
           ") must not exceed --max-connections (" + std::to_string(l.max_connections) + ")";
  if (o.max_event_streams >= l.max_connections)
    return "--max-event-streams (" + std::to_string(o.max_event_streams) + ") must be less than --max-connections (" +
           std::to_string(l.max_connections) + "): event streams hold connections";
  return std::nullopt;
}

int serve(Gateway& gw, const client::NodeClient& node, const ServerOptions& o, RestMetrics& metrics) {
  // Plain or TLS, one connection loop with the same bounds (keep_alive_server.hpp).
  std::shared_ptr<const TlsContext> tls;
  if (!o.tls_cert.empty()) {
    std::string error;
    tls = TlsContext::load(o.tls_cert, o.tls_key, error);
    if (!tls) {
      std::cerr << "claim2core-rest: " << error << "\n";
      return 1;
    }
  }
  auto svr = std::make_unique<KeepAliveServer>(
      o.limits, [&metrics](const char* reason) { metrics.refused(reason); },
      [&metrics](int delta) { delta > 0 ? metrics.connection_opened() : metrics.connection_closed(); }, tls);
  metrics.set_limit("max_json_depth", static_cast<double>(gw.limits().max_json_depth));
  metrics.set_limit("max_body_bytes", static_cast<double>(o.max_body_bytes));
  metrics.set_limit("max_header_bytes", static_cast<double>(o.limits.max_header_bytes));
  metrics.set_limit("header_timeout_seconds", static_cast<double>(o.limits.header_timeout.count()) / 1000.0);
  metrics.set_limit("body_timeout_seconds", static_cast<double>(o.limits.body_timeout.count()) / 1000.0);
  metrics.set_limit("max_connections", static_cast<double>(o.limits.max_connections));
  metrics.set_limit("max_connections_per_client", static_cast<double>(o.limits.max_connections_per_client));
  metrics.set_limit("worker_threads", static_cast<double>(o.worker_threads));
  metrics.set_limit("max_event_streams", static_cast<double>(o.max_event_streams));
  size_t workers = o.worker_threads;
  svr->new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
  svr->set_payload_max_length(o.max_body_bytes);
  svr->set_keep_alive_max_count(1000);  // a GUI or script keeps one connection (httplib: 5)
  // httplib writes the header and the body separately: with Nagle the body waits for the
  // client's delayed ACK, 40 ms a response (bench/rest_gateway_bench.py measured it).
  svr->set_tcp_nodelay(true);
  svr->set_default_headers({{"Content-Security-Policy", kCsp},
                            {"X-Content-Type-Options", "nosniff"},
                            {"Referrer-Policy", "no-referrer"},
                            {"X-Frame-Options", "DENY"}});
  svr->set_pre_routing_handler([&o](const httplib::Request& req, httplib::Response& res) {
    t_routed = std::chrono::steady_clock::now();
    if (o.cors.enabled()) {  // every reply to a listed origin, the errors' too
      std::string h;
      for (const auto& [k, v] : cors_headers(o.cors, header(req, "Origin", h))) res.set_header(k.c_str(), v);
    }
    KeepAliveServer::head_received();  // the head is read: the body's deadline starts
    return httplib::Server::HandlerResponse::Unhandled;
  });
  svr->set_error_handler([&metrics](const httplib::Request&, httplib::Response& res) {
    if (res.status == 413) metrics.refused("body-too-large");
    if (!res.body.empty()) return;
    const char* msg = res.status == 404 ? "not found" : res.status == 413 ? "request body too large" : "request refused";
    send(res, fail(res.status, msg));
  });

  using Req = const httplib::Request&;
  using Res = httplib::Response&;
  auto with_auth = [&gw](auto method) {
    return [&gw, method](Req req, Res res) {
      std::string h;
      send(res, (gw.*method)(header(req, "Authorization", h), req.body));
    };
  };
  svr->Post("/api/v1/node-scheduling-policies", with_auth(&Gateway::create_policy));
  svr->Put("/api/v1/node-scheduling-policies", with_auth(&Gateway::update_policy));
  svr->Delete("/api/v1/node-scheduling-policies", with_auth(&Gateway::delete_policy));
  svr->Delete("/api/v1/node-scheduling-intents", with_auth(&Gateway::delete_intents));
  svr->Post("/api/v1/preview", with_auth(&Gateway::preview));
  svr->Get("/api/v1/node-scheduling-policies/self", [&gw](Req req, Res res) {
    std::string h;
    send(res, gw.list_policies(header(req, "Authorization", h)));
  });
  svr->Get("/api/v1/node-scheduling-intents/self", [&gw](Req req, Res res) {
    std::string h;
    send(res, gw.list_intents(header(req, "Authorization", h)));
  });
  svr->Get("/api/v1/tasks", [&gw](Req req, Res res) {
    std::string h;
    send(res, gw.list_tasks(header(req, "Authorization", h), query_of(req)));
  });
  svr->Get(R"(/api/v1/tasks/([^/]*)/explain)", [&gw](Req req, Res res) {
    std::string h;
    send(res, gw.explain(header(req, "Authorization", h), req.matches[1]));
  });
  svr->Get("/api/v1/decisions", [&gw](Req req, Res res) {
    std::string h;
    send(res, gw.list_decisions(header(req, "Authorization", h), query_of(req)));
  });
  svr->Get("/api/v1/users/self", [&gw](Req req, Res res) {
    std::string h;
    send(res, gw.self_user(header(req, "Authorization", h)));
  });
  // The password login (login_service.hpp), with --users-file only.
  auto login_route = [&o](auto call) {
    return [&o, call](Req req, Res res) {
      if (!o.login) return send(res, fail(404, "password login is off (claim2core-rest --users-file)"));
      Reply r = call(*o.login, req);
      if (r.status == 429) res.set_header("Retry-After", std::to_string(r.body.value("retryAfterSeconds", 1)));
      send(res, r);
    };
  };
  svr->Post("/api/v1/auth/login", login_route([](LoginService& l, Req req) { return l.login(req.remote_addr, req.body); }));
  svr->Post("/api/v1/auth/refresh", login_route([](LoginService& l, Req req) { return l.refresh(req.body); }));
  svr->Post("/api/v1/auth/logout", login_route([](LoginService& l, Req req) {
    std::string h;
    return l.logout(header(req, "Authorization", h), req.body);
  }));
  svr->Get("/health", [&gw](Req, Res res) { send(res, gw.health()); });
  svr->Get("/metrics", [&gw, &metrics](Req req, Res res) {
    std::string h;
    if (auto refused = gw.authorize_metrics(header(req, "Authorization", h))) return send(res, *refused);
    res.set_header("Cache-Control", "no-store");
    res.set_content(metrics.text(), "text/plain; version=0.0.4; charset=utf-8");
  });
  svr->Get("/version", [&gw](Req, Res res) { send(res, gw.version()); });

  auto open_streams = std::make_shared<std::atomic<size_t>>(0);
  svr->Get("/api/v1/events", [&gw, &node, &o, &metrics, open_streams](Req req, Res res) {
    std::string h;
    // EventSource cannot set headers: the GUI passes its token as ?access_token=.
    const std::string* auth = header(req, "Authorization", h);
    if (!auth && req.has_param("access_token")) {
      h = "Bearer " + req.get_param_value("access_token");
      auth = &h;
    }
    auto who = gw.authorize_events(auth);
    if (auto* r = std::get_if<Reply>(&who)) return send(res, *r);
    if (open_streams->fetch_add(1) >= o.max_event_streams) {
      open_streams->fetch_sub(1);
      metrics.refused("event-streams");
      return send(res, fail(503, "too many open event streams (at most " + std::to_string(o.max_event_streams) + ")"));
    }
    auto es = std::make_shared<EventStream>();
    es->start(node);
    res.set_header("Cache-Control", "no-store");
    res.set_chunked_content_provider(
        "text/event-stream",
        [es](size_t, httplib::DataSink& sink) {
          std::unique_lock<std::mutex> l(es->mu);
          es->cv.wait_for(l, std::chrono::seconds(15), [&] { return !es->queue.empty() || es->ended; });
          std::string out;
          while (!es->queue.empty()) {
            out += es->queue.front();
            es->queue.pop_front();
          }
          bool ended = es->ended && out.empty();
          if (ended) out = "event: end\ndata: " + json(es->end_reason).dump() + "\n\n";
          if (out.empty()) out = ": keep-alive\n\n";
          l.unlock();
          if (!sink.write(out.data(), out.size())) return false;
          if (ended) sink.done();
          return true;
        },
        [es, open_streams](bool) { open_streams->fetch_sub(1); });
  });

  if (o.cors.enabled())  // a preflight is answered only for a listed origin (cors_policy.hpp)
    svr->Options(R"(/.*)", [&o, &metrics](Req req, Res res) {
      std::string h1, h2;
      auto p = cors_preflight(o.cors, header(req, "Origin", h1), header(req, "Access-Control-Request-Method", h2));
      if (p.reply.status != 204) metrics.refused("cors");
      for (const auto& [k, v] : p.headers)  // the pre-routing handler set the origin's already
        if (!res.has_header(k.c_str())) res.set_header(k.c_str(), v);
      if (p.reply.status == 204) {
        res.status = 204;
        return;
      }
      send(res, p.reply);
    });

  if (o.gui) {  // the operator's GUI folder (--gui-dir) instead of the embedded one, API paths excepted
    svr->Get(R"(/.*)", [&o, &metrics](Req req, Res res) {
      if (req.path.rfind("/api/", 0) == 0) return send(res, fail(404, "not found"));
      auto got = o.gui->get(req.path);
      if (auto* r = std::get_if<Reply>(&got)) {
        if (r->status == 400) metrics.refused("path");
        return send(res, *r);
      }
      const auto& f = std::get<GuiFile>(got);
      res.set_header("ETag", f.etag);
      res.set_header("Cache-Control", "no-cache");
      if (req.has_header("If-None-Match") && req.get_header_value("If-None-Match") == f.etag) {
        res.status = 304;
        return;
      }
      res.set_content(f.content, f.content_type.c_str());
    });
  } else {
    svr->Get(R"(/(|index\.html|[a-z]+\.(js|css)))", [](Req req, Res res) {
      std::string path = req.path == "/" ? "/index.html" : req.path;
      const WebAsset* a = find_web_asset(path);
      if (!a) return send(res, fail(404, "not found"));
      serve_asset(req, res, *a);
    });
  }

  g_server = svr.get();
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::cerr << "claim2core-rest: listening on " << (o.tls_cert.empty() ? "http" : "https") << "://" << o.host
            << ":" << o.port << "\n";
  if (!svr->bind_to_port(o.host, o.port)) {
    std::cerr << "claim2core-rest: cannot listen on " << o.host << ":" << o.port << "\n";
    return 1;
  }
  svr->set_listen_backlog(static_cast<int>(o.limits.max_connections));
  return svr->listen_after_bind() ? 0 : 1;
}

}  // namespace c2c::rest
