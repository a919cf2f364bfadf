// The Hive metastore service of `late-data cluster up`, listening on one address.
//
// Hive 2.3.9's HiveMetaStore.main (the release pyspark 3.5 ships) always binds its Thrift socket to
// every address: startMetaStore calls HiveAuthUtils.getServerSocket(null, port), and no setting
// names a host (`metastore.thrift.bind.host` only exists from Hive 3's standalone metastore on).
// This serves the same handler the same way as startMetaStore's plain (no SASL, no SSL) path, on
// the address given. It is compiled when started by Janino, which pyspark's jars include, so
// neither a JDK nor a build step is needed: java -cp <conf>:<spark jars>/*
// org.codehaus.janino.SimpleCompiler BoundMetastore.java BoundMetastore <host> <port>
//
// Janino compiles Java without generics checks, hence the raw types.

import java.lang.reflect.Field;
import java.net.InetSocketAddress;

import org.apache.hadoop.hive.common.LogUtils;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.IHMSHandler;
import org.apache.hadoop.hive.metastore.TServerSocketKeepAlive;
import org.apache.hadoop.hive.metastore.TSetIpAddressProcessor;
import org.apache.hadoop.hive.metastore.TUGIBasedProcessor;
import org.apache.hadoop.hive.thrift.TUGIContainingTransport;
import org.apache.thrift.TProcessor;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.server.TThreadPoolServer;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TServerTransport;
import org.apache.thrift.transport.TTransportFactory;

public final class BoundMetastore {
    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        LogUtils.initHiveLog4j();
        HiveConf conf = new HiveConf(HiveMetaStore.HMSHandler.class);
        // The paths of startMetaStore this does not reproduce: refused rather than silently ignored.
        String[] unsupported = {
            HiveConf.ConfVars.METASTORE_USE_THRIFT_SASL.varname,
            HiveConf.ConfVars.HIVE_METASTORE_USE_SSL.varname,
            HiveConf.ConfVars.METASTORE_USE_THRIFT_FRAMED_TRANSPORT.varname,
            HiveConf.ConfVars.METASTORE_USE_THRIFT_COMPACT_PROTOCOL.varname,
        };
        for (int i = 0; i < unsupported.length; i++) {
            if (conf.getBoolean(unsupported[i], false)) {
                throw new IllegalArgumentException(unsupported[i] + "=true is not supported by BoundMetastore");
            }
        }
        // startMetaStore sets it: the handler then takes each client's address from the processor.
        Field remote = HiveMetaStore.class.getDeclaredField("isMetaStoreRemote");
        remote.setAccessible(true);
        remote.setBoolean(null, true);
        IHMSHandler handler = HiveMetaStore.newRetryingHMSHandler(
            new HiveMetaStore.HMSHandler("new db based metaserver", conf, false), conf);
        TProcessor processor;
        TTransportFactory transports;
        if (conf.getBoolVar(HiveConf.ConfVars.METASTORE_EXECUTE_SET_UGI)) {
            processor = new TUGIBasedProcessor(handler);
            transports = new TUGIContainingTransport.Factory();
        } else {
            processor = new TSetIpAddressProcessor(handler);
            transports = new TTransportFactory();
        }
        TServerSocket socket = new TServerSocket(new InetSocketAddress(host, port));
        TServerTransport transport = conf.getBoolVar(HiveConf.ConfVars.METASTORE_TCP_KEEP_ALIVE)
            ? (TServerTransport) new TServerSocketKeepAlive(socket)
            : (TServerTransport) socket;
        long maxMessage = conf.getLongVar(HiveConf.ConfVars.METASTORESERVERMAXMESSAGESIZE);
        TThreadPoolServer.Args server = new TThreadPoolServer.Args(transport);
        server.processor(processor);
        server.transportFactory(transports);
        server.protocolFactory(new TBinaryProtocol.Factory());
        server.inputProtocolFactory(new TBinaryProtocol.Factory(true, true, maxMessage, maxMessage));
        server.minWorkerThreads(conf.getIntVar(HiveConf.ConfVars.METASTORESERVERMINTHREADS));
        server.maxWorkerThreads(conf.getIntVar(HiveConf.ConfVars.METASTORESERVERMAXTHREADS));
        System.err.println("BoundMetastore: serving the Hive metastore on " + host + ":" + port);
        new TThreadPoolServer(server).serve();
    }
}
