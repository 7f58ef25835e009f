// JMX on Cassandra nodes for elastman: one JVM program, run by the JDK in
// source-file mode (no build step, JDK classes only). Its first argument says
// which program runs:
//
//   bridge  elastman-monitor's request/answer bridge (class JmxBridge)
//   poll    elastman-hostagent's read-latency poller (class LatencyPoller)
//
// Both write JSON lines on stdout (strings quoted by Json.str).
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Array;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import javax.rmi.ssl.SslRMIClientSocketFactory;

public class CassandraJmx {
    public static void main(String[] args) throws Exception {
        String[] rest = Arrays.copyOfRange(args, Math.min(1, args.length), args.length);
        switch (args.length > 0 ? args[0] : "") {
            case "bridge": JmxBridge.main(rest); break;
            case "poll": LatencyPoller.main(rest); break;
            default:
                System.err.println("usage: java CassandraJmx.java bridge|poll");
                System.exit(2);
        }
    }
}

final class Json {
    /** A JSON string literal of s. */
    static String str(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (ch < 0x20) sb.append(String.format("\\u%04x", (int) ch));
                    else sb.append(ch);
            }
        }
        return sb.append('"').toString();
    }
}

// JSON-lines JMX bridge of elastman-monitor: reads requests from stdin, answers
// on stdout, one connection per (host, port), requests served concurrently so
// that a slow node does not hold up the others.
//
// Requests (one line each, tab-separated):
//   id  host  port  timeout_ms  QUERY  objectNamePattern  attr,attr  op,op
//       [user_b64  password_b64  tls]
//   id  -  -  -  TRUST  pem_b64
// QUERY connects with the JMX credentials given (base64, empty for none) and,
// when tls is 1, over TLS (RMI registry and connection). TRUST adds the CA
// certificates of a PEM text to those TLS connections trust, besides the
// JDK's own; it is applied before any later request is read.
// Answer (one line of JSON):
//   {"id": "...", "ok": true, "result": [{"name": "...", "attrs": {...},
//    "ops": {...}}]}    or    {"id": "...", "ok": false, "error": "..."}
final class JmxBridge {
    private static final Map<String, JMXConnector> CONNECTIONS = new ConcurrentHashMap<>();
    private static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r);
        t.setDaemon(true);
        return t;
    });
    private static final ExecutorService CONNECTOR = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r);
        t.setDaemon(true);
        return t;
    });
    private static final PrintStream OUT = System.out;

    // CA certificates added by TRUST; TLS connections trust them and the JDK's CAs
    private static final List<Certificate> ADDED = new ArrayList<>();
    private static volatile X509TrustManager addedTrust;
    private static X509TrustManager systemTrust;

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        systemTrust = trustManager(null);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, new TrustManager[] {new Trust()}, null);
        SSLContext.setDefault(context);  // what SslRMIClientSocketFactory uses
        emit("{\"id\":\"ready\",\"ok\":true,\"result\":[]}");
        String line;
        while ((line = in.readLine()) != null) {
            final String request = line;
            String[] f = request.split("\t", -1);
            if (f.length >= 6 && "TRUST".equals(f[4])) {
                trust(f[0], f[5]);   // in order: later requests may need it
                continue;
            }
            POOL.submit(() -> answer(request));
        }
        // stdin closed: the monitor is gone; finish what is running, then exit.
        POOL.shutdown();
        POOL.awaitTermination(30, TimeUnit.SECONDS);
        System.exit(0);
    }

    private static void answer(String line) {
        String[] f = line.split("\t", -1);
        String id = f.length > 0 ? f[0] : "";
        try {
            if (f.length < 8 || !"QUERY".equals(f[4])) {
                throw new IllegalArgumentException("bad request: " + line);
            }
            String user = f.length > 8 ? decode(f[8]) : "";
            String password = f.length > 9 ? decode(f[9]) : "";
            boolean tls = f.length > 10 && "1".equals(f[10]);
            String key = f[1] + ":" + f[2] + ":" + user + ":" + password.hashCode() + ":" + tls;
            long timeout = Long.parseLong(f[3]);
            String body;
            try {
                MBeanServerConnection mbs = connect(key, f[1], Integer.parseInt(f[2]), timeout,
                                                    user, password, tls);
                body = query(mbs, f[5], split(f[6]), split(f[7]));
            } catch (Exception e) {
                JMXConnector old = CONNECTIONS.remove(key);
                if (old != null) {
                    try { old.close(); } catch (Exception ignored) { }
                }
                throw e;
            }
            emit("{\"id\":" + Json.str(id) + ",\"ok\":true,\"result\":" + body + "}");
        } catch (Throwable e) {
            Throwable root = e;
            while (root.getCause() != null) root = root.getCause();
            emit("{\"id\":" + Json.str(id) + ",\"ok\":false,\"error\":"
                 + Json.str(e.getClass().getSimpleName() + ": " + e.getMessage()
                       + (root != e ? " (" + root + ")" : "")) + "}");
        }
    }

    private static String[] split(String s) {
        return s.isEmpty() ? new String[0] : s.split(",");
    }

    private static synchronized void emit(String json) {
        OUT.println(json);
        OUT.flush();
    }

    private static String decode(String b64) {
        return new String(Base64.getDecoder().decode(b64), StandardCharsets.UTF_8);
    }

    private static MBeanServerConnection connect(String key, String host, int port, long timeout,
                                                 String user, String password, boolean tls)
            throws Exception {
        JMXConnector c = CONNECTIONS.get(key);
        if (c == null) {
            JMXServiceURL url = new JMXServiceURL(
                "service:jmx:rmi:///jndi/rmi://" + host + ":" + port + "/jmxrmi");
            Map<String, Object> env = new HashMap<>();
            if (!user.isEmpty()) {
                env.put(JMXConnector.CREDENTIALS, new String[] {user, password});
            }
            if (tls) {  // the registry over TLS; the server's stub brings its own SSL factory
                env.put("com.sun.jndi.rmi.factory.socket", new SslRMIClientSocketFactory());
            }
            Future<JMXConnector> f = CONNECTOR.submit(() -> JMXConnectorFactory.connect(url, env));
            try {
                c = f.get(timeout, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                f.cancel(true);
                throw new java.io.IOException("JMX connect to " + host + ":" + port
                                              + " timed out after " + timeout + " ms");
            }
            CONNECTIONS.put(key, c);
        }
        return c.getMBeanServerConnection();
    }

    private static void trust(String id, String pemB64) {
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            byte[] pem = Base64.getDecoder().decode(pemB64);
            synchronized (ADDED) {
                ADDED.addAll(factory.generateCertificates(new ByteArrayInputStream(pem)));
                KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
                store.load(null, null);
                for (int i = 0; i < ADDED.size(); i++) {
                    store.setCertificateEntry("ca" + i, ADDED.get(i));
                }
                addedTrust = trustManager(store);
            }
            emit("{\"id\":" + Json.str(id) + ",\"ok\":true,\"result\":[]}");
        } catch (Exception e) {
            emit("{\"id\":" + Json.str(id) + ",\"ok\":false,\"error\":"
                 + Json.str("TRUST: " + e) + "}");
        }
    }

    private static X509TrustManager trustManager(KeyStore store) throws Exception {
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(
            TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(store);  // null: the JDK's CA certificates
        for (TrustManager tm : tmf.getTrustManagers()) {
            if (tm instanceof X509TrustManager) return (X509TrustManager) tm;
        }
        throw new IllegalStateException("no X509TrustManager");
    }

    // Trusts what the JDK trusts, and the certificates TRUST added.
    private static final class Trust implements X509TrustManager {
        public void checkClientTrusted(X509Certificate[] chain, String auth)
                throws CertificateException {
            systemTrust.checkClientTrusted(chain, auth);
        }

        public void checkServerTrusted(X509Certificate[] chain, String auth)
                throws CertificateException {
            try {
                systemTrust.checkServerTrusted(chain, auth);
            } catch (CertificateException e) {
                X509TrustManager added = addedTrust;
                if (added == null) throw e;
                added.checkServerTrusted(chain, auth);
            }
        }

        public X509Certificate[] getAcceptedIssuers() {
            List<X509Certificate> all = new ArrayList<>(List.of(systemTrust.getAcceptedIssuers()));
            X509TrustManager added = addedTrust;
            if (added != null) all.addAll(List.of(added.getAcceptedIssuers()));
            return all.toArray(new X509Certificate[0]);
        }
    }

    private static String query(MBeanServerConnection mbs, String pattern, String[] attrs, String[] ops)
            throws Exception {
        Set<ObjectName> names = mbs.queryNames(new ObjectName(pattern), null);
        StringBuilder sb = new StringBuilder("[");
        boolean first = true;
        for (ObjectName name : names) {
            if (!first) sb.append(',');
            first = false;
            sb.append("{\"name\":").append(Json.str(name.toString())).append(",\"attrs\":{");
            boolean f2 = true;
            if (attrs.length > 0) {
                for (javax.management.Attribute a : mbs.getAttributes(name, attrs).asList()) {
                    if (!f2) sb.append(',');
                    f2 = false;
                    sb.append(Json.str(a.getName())).append(':').append(value(a.getValue()));
                }
            }
            sb.append("},\"ops\":{");
            f2 = true;
            for (String op : ops) {
                Object v;
                try {
                    v = mbs.invoke(name, op, new Object[0], new String[0]);
                } catch (javax.management.ReflectionException | javax.management.MBeanException e) {
                    v = null;
                }
                if (!f2) sb.append(',');
                f2 = false;
                sb.append(Json.str(op)).append(':').append(value(v));
            }
            sb.append("}}");
        }
        return sb.append(']').toString();
    }

    private static String value(Object v) {
        if (v == null) return "null";
        if (v instanceof Number || v instanceof Boolean) {
            String s = v.toString();
            return ("NaN".equals(s) || s.contains("Infinity")) ? "null" : s;
        }
        if (v.getClass().isArray()) {
            StringBuilder sb = new StringBuilder("[");
            int n = Array.getLength(v);
            for (int i = 0; i < n; i++) {
                if (i > 0) sb.append(',');
                sb.append(value(Array.get(v, i)));
            }
            return sb.append(']').toString();
        }
        return Json.str(v.toString());
    }
}

// Latency signal of elastman-hostagent: polls the coordinator read-latency
// histogram of each watched Cassandra node over JMX at a fixed period and
// writes what changed since the previous poll, one JSON line per node and
// poll, to stdout. Requests on stdin, one per line, tab-separated:
//
//   PERIOD  <ms>                       poll period (default 20)
//   WATCH   <id>  <host>  <port>  [<user>  <password>]
//   UNWATCH <id>
//
// Output:
//   {"id":"..","ok":true,"n":<requests>,"d":[[bucket,count],...]}
//   {"id":"..","ok":false,"error":"..."}     (then reconnects, backing off)
//
// The histogram is the non-decaying bucket array behind
// org.apache.cassandra.metrics:type=ClientRequest,scope=Read,name=Latency
// ("values"); the difference of two polls holds exactly the requests that
// completed in between. Each node is polled by a task of its own on a pool
// of four threads, so a slow node delays others only when four are slow.
final class LatencyPoller {
    private static final String READ_LATENCY =
        "org.apache.cassandra.metrics:type=ClientRequest,scope=Read,name=Latency";
    private static final PrintStream OUT = System.out;
    private static final Map<String, Watch> WATCHES = new ConcurrentHashMap<>();
    private static final ScheduledExecutorService TIMER =
        Executors.newScheduledThreadPool(4, r -> {
            Thread t = new Thread(r, "latency-poller");
            t.setDaemon(true);
            return t;
        });
    private static volatile long periodMs = 20;

    static final class Watch implements Runnable {
        final String id, host, user, password;
        final int port;
        JMXConnector connector;
        MBeanServerConnection mbs;
        long[] previous;
        long retryAt;
        long backoffMs = 100;
        ScheduledFuture<?> task;

        Watch(String id, String host, int port, String user, String password) {
            this.id = id;
            this.host = host;
            this.port = port;
            this.user = user;
            this.password = password;
        }

        public synchronized void run() {
            long now = System.currentTimeMillis();
            if (now < retryAt) return;
            try {
                if (mbs == null) connect();
                long[] values = (long[]) mbs.invoke(new ObjectName(READ_LATENCY),
                    "values", new Object[0], new String[0]);
                if (previous != null && previous.length == values.length) {
                    emitDelta(values);
                }
                previous = values;
                backoffMs = 100;
            } catch (Exception e) {
                close();
                previous = null;
                retryAt = now + backoffMs;
                backoffMs = Math.min(backoffMs * 2, 10000);
                Throwable root = e;
                while (root.getCause() != null) root = root.getCause();
                emit("{\"id\":" + Json.str(id) + ",\"ok\":false,\"error\":"
                     + Json.str(e.getClass().getSimpleName() + ": " + e.getMessage()
                           + (root != e ? " (" + root + ")" : "")) + "}");
            }
        }

        private void emitDelta(long[] values) {
            StringBuilder sb = new StringBuilder();
            long n = 0;
            boolean reset = false;
            for (int i = 0; i < values.length; i++) {
                long d = values[i] - previous[i];
                if (d < 0) reset = true;
                if (d > 0) {
                    if (n > 0) sb.append(',');
                    sb.append('[').append(i).append(',').append(d).append(']');
                    n += d;
                }
            }
            if (reset) return;   // the node restarted: its counters began again
            emit("{\"id\":" + Json.str(id) + ",\"ok\":true,\"n\":" + n + ",\"d\":[" + sb + "]}");
        }

        private void connect() throws Exception {
            JMXServiceURL url = new JMXServiceURL(
                "service:jmx:rmi:///jndi/rmi://" + host + ":" + port + "/jmxrmi");
            Map<String, Object> env = new HashMap<>();
            if (user != null) env.put(JMXConnector.CREDENTIALS, new String[] {user, password});
            connector = JMXConnectorFactory.connect(url, env);
            mbs = connector.getMBeanServerConnection();
        }

        synchronized void close() {
            if (connector != null) {
                try { connector.close(); } catch (Exception ignored) { }
            }
            connector = null;
            mbs = null;
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        emit("{\"id\":\"ready\",\"ok\":true}");
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            try {
                switch (f[0]) {
                    case "PERIOD":
                        periodMs = Math.max(1, Long.parseLong(f[1]));
                        for (Watch w : WATCHES.values()) schedule(w);
                        break;
                    case "WATCH": {
                        Watch old = WATCHES.remove(f[1]);
                        if (old != null) stop(old);
                        Watch w = new Watch(f[1], f[2], Integer.parseInt(f[3]),
                            f.length > 5 ? f[4] : null, f.length > 5 ? f[5] : null);
                        WATCHES.put(w.id, w);
                        schedule(w);
                        break;
                    }
                    case "UNWATCH": {
                        Watch w = WATCHES.remove(f[1]);
                        if (w != null) stop(w);
                        break;
                    }
                    default:
                        throw new IllegalArgumentException("unknown request " + f[0]);
                }
            } catch (Exception e) {
                emit("{\"id\":\"request\",\"ok\":false,\"error\":" + Json.str(String.valueOf(e)) + "}");
            }
        }
        // stdin closed: the agent is gone
        for (Watch w : WATCHES.values()) stop(w);
        System.exit(0);
    }

    private static void schedule(Watch w) {
        if (w.task != null) w.task.cancel(false);
        w.task = TIMER.scheduleAtFixedRate(w, 0, periodMs, TimeUnit.MILLISECONDS);
    }

    private static void stop(Watch w) {
        if (w.task != null) w.task.cancel(false);
        w.close();
    }

    private static synchronized void emit(String json) {
        OUT.println(json);
        OUT.flush();
    }
}
