/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not
 * use this file except in compliance with the License. You may obtain a copy
 * of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package org.openstack.elastman.ycsb;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ColumnDefinition;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.Vector;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * A YCSB binding for Cassandra on the DataStax Java driver 4.x.
 *
 * <p>The table has a text partition key {@code y_id} and one blob column per
 * YCSB field ({@code field0 .. fieldN-1}); elastman's evaluation creates it.
 * YCSB makes one DB object per client thread: all of them share one
 * {@link CqlSession} (reference counted, closed by the last cleanup) and one
 * cache of prepared statements keyed by operation and field list.
 *
 * <p>Properties: {@code cassandra.hosts} (comma-separated host[:port]),
 * {@code cassandra.port} (9042), {@code cassandra.keyspace} (ycsb),
 * {@code cassandra.localdc} (datacenter1),
 * {@code cassandra.readconsistencylevel} and
 * {@code cassandra.writeconsistencylevel} (ONE),
 * {@code cassandra.requesttimeoutms} (10000),
 * {@code cassandra.connectionsperhost} (1).
 */
public class CassandraCqlClient extends DB {

  public static final String KEY = "y_id";

  private static final Object LOCK = new Object();
  private static CqlSession session;
  private static int references;
  private static final Map<String, PreparedStatement> STATEMENTS =
      new ConcurrentHashMap<>();
  private static final AtomicLong FAILURES = new AtomicLong();
  private static ConsistencyLevel readCl = DefaultConsistencyLevel.ONE;
  private static ConsistencyLevel writeCl = DefaultConsistencyLevel.ONE;

  private boolean initialised;

  @Override
  public void init() throws DBException {
    Properties p = getProperties();
    synchronized (LOCK) {
      if (session == null) {
        session = connect(p);
        STATEMENTS.clear();
      }
      references++;
      initialised = true;
    }
  }

  private static CqlSession connect(Properties p) throws DBException {
    String hosts = p.getProperty("cassandra.hosts", p.getProperty("hosts"));
    if (hosts == null || hosts.trim().isEmpty()) {
      throw new DBException("cassandra.hosts is required");
    }
    int port = Integer.parseInt(p.getProperty("cassandra.port", "9042"));
    String keyspace = p.getProperty("cassandra.keyspace", "ycsb");
    String dc = p.getProperty("cassandra.localdc", "datacenter1");
    long timeout = Long.parseLong(
        p.getProperty("cassandra.requesttimeoutms", "10000"));
    int connections = Integer.parseInt(
        p.getProperty("cassandra.connectionsperhost", "1"));
    readCl = DefaultConsistencyLevel.valueOf(
        p.getProperty("cassandra.readconsistencylevel", "ONE").toUpperCase());
    writeCl = DefaultConsistencyLevel.valueOf(
        p.getProperty("cassandra.writeconsistencylevel", "ONE").toUpperCase());

    DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
        .withDuration(DefaultDriverOption.REQUEST_TIMEOUT,
            Duration.ofMillis(timeout))
        .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT,
            Duration.ofSeconds(10))
        .withDuration(DefaultDriverOption.CONTROL_CONNECTION_TIMEOUT,
            Duration.ofSeconds(10))
        .withInt(DefaultDriverOption.CONNECTION_POOL_LOCAL_SIZE, connections)
        .build();
    CqlSessionBuilder builder = CqlSession.builder()
        .withConfigLoader(config)
        .withLocalDatacenter(dc)
        .withKeyspace(keyspace);
    for (String host : hosts.split(",")) {
      String h = host.trim();
      if (h.isEmpty()) {
        continue;
      }
      int at = h.lastIndexOf(':');
      if (at > 0 && h.indexOf(':') == at) {
        builder.addContactPoint(new InetSocketAddress(
            h.substring(0, at), Integer.parseInt(h.substring(at + 1))));
      } else {
        builder.addContactPoint(new InetSocketAddress(h, port));
      }
    }
    try {
      return builder.build();
    } catch (RuntimeException e) {
      throw new DBException("cannot connect to " + hosts + ": " + e, e);
    }
  }

  @Override
  public void cleanup() throws DBException {
    synchronized (LOCK) {
      if (!initialised) {
        return;
      }
      initialised = false;
      references--;
      if (references == 0 && session != null) {
        session.close();
        session = null;
        STATEMENTS.clear();
      }
    }
  }

  private static String columns(Set<String> fields) {
    return fields == null ? "*" : String.join(", ", new TreeSet<>(fields));
  }

  private static PreparedStatement prepare(String id, String cql) {
    return STATEMENTS.computeIfAbsent(id, k -> session.prepare(cql));
  }

  private static void copyRow(Row row, Map<String, ByteIterator> result) {
    for (ColumnDefinition column : row.getColumnDefinitions()) {
      String name = column.getName().asInternal();
      if (KEY.equals(name)) {
        continue;
      }
      ByteBuffer value = row.getByteBuffer(name);
      byte[] bytes = new byte[value == null ? 0 : value.remaining()];
      if (value != null) {
        value.duplicate().get(bytes);
      }
      result.put(name, new ByteArrayByteIterator(bytes));
    }
  }

  private static Status failed(String op, Exception e) {
    long n = FAILURES.incrementAndGet();
    if (n <= 20 || n % 1000 == 0) {
      System.err.println("elastman-ycsb: " + op + " failed (" + n
          + " failures so far): " + e);
    }
    return Status.ERROR;
  }

  @Override
  public Status read(String table, String key, Set<String> fields,
                     Map<String, ByteIterator> result) {
    try {
      String cols = columns(fields);
      PreparedStatement ps = prepare("read/" + table + "/" + cols,
          "SELECT " + cols + " FROM " + table + " WHERE " + KEY + " = ?");
      Row row = session.execute(ps.bind(key).setConsistencyLevel(readCl))
          .one();
      if (row == null) {
        return Status.NOT_FOUND;
      }
      copyRow(row, result);
      return Status.OK;
    } catch (RuntimeException e) {
      return failed("read", e);
    }
  }

  @Override
  public Status scan(String table, String startkey, int recordcount,
                     Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    try {
      String cols = columns(fields);
      PreparedStatement ps = prepare("scan/" + table + "/" + cols,
          "SELECT " + cols + " FROM " + table + " WHERE token(" + KEY
              + ") >= token(?) LIMIT ?");
      ResultSet rs = session.execute(ps.bind(startkey, recordcount)
          .setConsistencyLevel(readCl));
      for (Row row : rs) {
        HashMap<String, ByteIterator> values = new HashMap<>();
        copyRow(row, values);
        result.add(values);
      }
      return Status.OK;
    } catch (RuntimeException e) {
      return failed("scan", e);
    }
  }

  private Status write(String op, String table, String key,
                       Map<String, ByteIterator> values) {
    try {
      return writeOrThrow(op, table, key, values);
    } catch (RuntimeException e) {
      return failed(op, e);
    }
  }

  private Status writeOrThrow(String op, String table, String key,
                              Map<String, ByteIterator> values) {
    TreeSet<String> names = new TreeSet<>(values.keySet());
    StringBuilder cql = new StringBuilder();
    if ("insert".equals(op)) {
      cql.append("INSERT INTO ").append(table).append(" (").append(KEY);
      for (String n : names) {
        cql.append(", ").append(n);
      }
      cql.append(") VALUES (?");
      for (int i = 0; i < names.size(); i++) {
        cql.append(", ?");
      }
      cql.append(')');
    } else {
      cql.append("UPDATE ").append(table).append(" SET ");
      String sep = "";
      for (String n : names) {
        cql.append(sep).append(n).append(" = ?");
        sep = ", ";
      }
      cql.append(" WHERE ").append(KEY).append(" = ?");
    }
    PreparedStatement ps = prepare(op + "/" + table + "/" + names,
        cql.toString());
    List<Object> args = new ArrayList<>(names.size() + 1);
    if ("insert".equals(op)) {
      args.add(key);
    }
    for (String n : names) {
      args.add(ByteBuffer.wrap(values.get(n).toArray()));
    }
    if (!"insert".equals(op)) {
      args.add(key);
    }
    BoundStatement bound = ps.bind(args.toArray()).setConsistencyLevel(writeCl);
    session.execute(bound);
    return Status.OK;
  }

  @Override
  public Status update(String table, String key,
                       Map<String, ByteIterator> values) {
    return write("update", table, key, values);
  }

  @Override
  public Status insert(String table, String key,
                       Map<String, ByteIterator> values) {
    return write("insert", table, key, values);
  }

  @Override
  public Status delete(String table, String key) {
    try {
      PreparedStatement ps = prepare("delete/" + table,
          "DELETE FROM " + table + " WHERE " + KEY + " = ?");
      session.execute(ps.bind(key).setConsistencyLevel(writeCl));
      return Status.OK;
    } catch (RuntimeException e) {
      return failed("delete", e);
    }
  }
}
