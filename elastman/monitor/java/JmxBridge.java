// JSON-lines JMX bridge of elastman-monitor: reads requests from stdin, answers
// on stdout, one connection per (host, port), requests served concurrently so
// that a slow node does not hold up the others.
//
// Request (one line, tab-separated):
//   id  host  port  timeout_ms  QUERY  objectNamePattern  attr,attr  op,op
// Answer (one line of JSON):
//   {"id": "...", "ok": true, "result": [{"name": "...", "attrs": {...},
//    "ops": {...}}]}    or    {"id": "...", "ok": false, "error": "..."}
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Array;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

public class JmxBridge {
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

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        emit("{\"id\":\"ready\",\"ok\":true,\"result\":[]}");
        String line;
        while ((line = in.readLine()) != null) {
            final String request = line;
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
            String key = f[1] + ":" + f[2];
            long timeout = Long.parseLong(f[3]);
            String body;
            try {
                MBeanServerConnection mbs = connect(f[1], Integer.parseInt(f[2]), timeout);
                body = query(mbs, f[5], split(f[6]), split(f[7]));
            } catch (Exception e) {
                JMXConnector old = CONNECTIONS.remove(key);
                if (old != null) {
                    try { old.close(); } catch (Exception ignored) { }
                }
                throw e;
            }
            emit("{\"id\":" + str(id) + ",\"ok\":true,\"result\":" + body + "}");
        } catch (Throwable e) {
            Throwable root = e;
            while (root.getCause() != null) root = root.getCause();
            emit("{\"id\":" + str(id) + ",\"ok\":false,\"error\":"
                 + str(e.getClass().getSimpleName() + ": " + e.getMessage()
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

    private static MBeanServerConnection connect(String host, int port, long timeout) throws Exception {
        String key = host + ":" + port;
        JMXConnector c = CONNECTIONS.get(key);
        if (c == null) {
            JMXServiceURL url = new JMXServiceURL(
                "service:jmx:rmi:///jndi/rmi://" + host + ":" + port + "/jmxrmi");
            Future<JMXConnector> f = CONNECTOR.submit(() -> JMXConnectorFactory.connect(url, null));
            try {
                c = f.get(timeout, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                f.cancel(true);
                throw new java.io.IOException("JMX connect to " + key + " timed out after " + timeout + " ms");
            }
            CONNECTIONS.put(key, c);
        }
        return c.getMBeanServerConnection();
    }

    private static String query(MBeanServerConnection mbs, String pattern, String[] attrs, String[] ops)
            throws Exception {
        Set<ObjectName> names = mbs.queryNames(new ObjectName(pattern), null);
        StringBuilder sb = new StringBuilder("[");
        boolean first = true;
        for (ObjectName name : names) {
            if (!first) sb.append(',');
            first = false;
            sb.append("{\"name\":").append(str(name.toString())).append(",\"attrs\":{");
            boolean f2 = true;
            if (attrs.length > 0) {
                for (javax.management.Attribute a : mbs.getAttributes(name, attrs).asList()) {
                    if (!f2) sb.append(',');
                    f2 = false;
                    sb.append(str(a.getName())).append(':').append(value(a.getValue()));
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
                sb.append(str(op)).append(':').append(value(v));
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
        return str(v.toString());
    }

    private static String str(String s) {
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
