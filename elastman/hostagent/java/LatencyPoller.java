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
// completed in between. Each node is polled on a thread of its own, so a
// slow node never delays another.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

public class LatencyPoller {
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
                emit("{\"id\":" + str(id) + ",\"ok\":false,\"error\":"
                     + str(e.getClass().getSimpleName() + ": " + e.getMessage()
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
            emit("{\"id\":" + str(id) + ",\"ok\":true,\"n\":" + n + ",\"d\":[" + sb + "]}");
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
                emit("{\"id\":\"request\",\"ok\":false,\"error\":" + str(String.valueOf(e)) + "}");
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
